// The exec credential plugin as the live client runs it (layers/kube/live/execCredentials/), against
// real plugin scripts in a temp dir that count their runs: the cache on the TestClock (expiry,
// one run for concurrent requests, one run for a burst of 401s), what the plugin is given (args,
// env, KUBERNETES_EXEC_INFO, a command relative to the kubeconfig), and its failures (exit code,
// bad output, not found, a hang past the timeout), whose messages name the command and the
// installHint but never what the plugin printed.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { KubeConfig, type User } from "@kubernetes/client-node"
import { Duration, Effect, Exit, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { stringify } from "yaml"
import { loadKubeConfig } from "../../../../layers/kube/live/kubeConfig.ts"
import { execConfigOf, usesExecPlugin } from "../../../../layers/kube/live/execCredentials/execConfig.ts"
import { type ExecAuthentication, makeExecAuthentication } from "../../../../layers/kube/live/execCredentials/execAuthentication.ts"
import { parseExecCredential } from "../../../../layers/kube/live/execCredentials/execCredential.ts"
import { execV1, plugin, tokenPlugin } from "./execPluginScript.ts"

const v1 = execV1
const root = mkdtempSync(join(tmpdir(), "preheat-exec-missing-"))

const kubeConfigWith = (exec: Record<string, unknown>, cluster: Record<string, unknown> = {}): KubeConfig => {
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:1", skipTLSVerify: false, ...cluster }],
    users: [{ name: "u", exec: { apiVersion: v1, interactiveMode: "Never", ...exec } }],
    contexts: [{ name: "ctx", cluster: "c", user: "u" }],
    currentContext: "ctx"
  })
  return config
}

const authentication = (
  config: KubeConfig,
  options: Parameters<typeof makeExecAuthentication>[1] = {}
): Effect.Effect<ExecAuthentication, unknown, import("effect").Scope.Scope> =>
  Effect.flatMap(makeExecAuthentication(config, options), (exec) =>
    exec === undefined ? Effect.die("no exec plugin") : Effect.succeed(exec)
  )

describe("the credential cache (TestClock)", () => {
  it.effect("holds a credential until its expirationTimestamp; the first request after it runs the plugin again", () =>
    Effect.gen(function* () {
      const tokens = tokenPlugin()
      const exec = yield* authentication(
        kubeConfigWith({ command: tokens.command, env: [{ name: "EXPIRES", value: "1970-01-01T00:01:00Z" }] })
      )
      assert.strictEqual((yield* exec.current).token, "t-1")
      yield* TestClock.adjust("60 seconds")
      // Not expired at the instant itself (client-go: expired once now is after it).
      assert.strictEqual((yield* exec.current).token, "t-1")
      assert.strictEqual(tokens.runs(), 1)
      yield* TestClock.adjust("1 millis")
      const renewed = yield* exec.current
      assert.strictEqual(renewed.token, "t-2")
      assert.strictEqual(renewed.expiresAt, 60_000)
      assert.strictEqual(tokens.runs(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("a credential without expirationTimestamp is held however long", () =>
    Effect.gen(function* () {
      const tokens = tokenPlugin()
      const exec = yield* authentication(kubeConfigWith({ command: tokens.command }))
      assert.strictEqual((yield* exec.current).token, "t-1")
      yield* TestClock.adjust("3650 days")
      assert.strictEqual((yield* exec.current).token, "t-1")
      assert.strictEqual(tokens.runs(), 1)
    }).pipe(Effect.scoped)
  )

  it.effect("requests finding no valid credential at the same moment share one plugin run", () =>
    Effect.gen(function* () {
      const tokens = tokenPlugin()
      const exec = yield* authentication(
        kubeConfigWith({ command: tokens.command, env: [{ name: "EXPIRES", value: "1970-01-01T00:01:00Z" }] })
      )
      const first = yield* Effect.all(
        Array.from({ length: 20 }, () => exec.current),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(new Set(first.map((credential) => credential.token)), new Set(["t-1"]))
      assert.strictEqual(tokens.runs(), 1)
      yield* TestClock.adjust("2 minutes")
      const second = yield* Effect.all(
        Array.from({ length: 20 }, () => exec.current),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(new Set(second.map((credential) => credential.token)), new Set(["t-2"]))
      assert.strictEqual(tokens.runs(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("a burst of 401s to one credential runs the plugin once; a 401 to a replaced credential changes nothing", () =>
    Effect.gen(function* () {
      const tokens = tokenPlugin()
      const exec = yield* authentication(kubeConfigWith({ command: tokens.command }))
      const refused = yield* exec.current
      const renewed = yield* Effect.all(
        Array.from({ length: 10 }, () => Effect.andThen(exec.rejected(refused), exec.current)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(new Set(renewed.map((credential) => credential.token)), new Set(["t-2"]))
      assert.strictEqual(tokens.runs(), 2)
      // A late 401 to the first credential: it is no longer the held one.
      yield* exec.rejected(refused)
      assert.strictEqual((yield* exec.current).token, "t-2")
      assert.strictEqual(tokens.runs(), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("a failed run fails every request waiting for it, once; the next request runs the plugin again", () =>
    Effect.gen(function* () {
      const flaky = plugin(
        `if [ "$N" = 1 ]; then exit 1; fi\nprintf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"t-%s"}}' "$N"`
      )
      const exec = yield* authentication(kubeConfigWith({ command: flaky.command }))
      const failed = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.flip(exec.current)),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(failed.length, 5)
      assert.strictEqual(flaky.runs(), 1)
      assert.strictEqual((yield* exec.current).token, "t-2")
    }).pipe(Effect.scoped)
  )
})

describe("what the plugin is given", () => {
  it.effect("args, env added to the process's, and KUBERNETES_EXEC_INFO with the cluster when provideClusterInfo", () =>
    Effect.gen(function* () {
      const recorder = plugin(
        [
          'printf \'%s\\n\' "$@" > "$DIR/args"',
          'printf \'%s\' "$GREETING" > "$DIR/greeting"',
          'printf \'%s\' "$HOME" > "$DIR/home"',
          'printf \'%s\' "$KUBERNETES_EXEC_INFO" > "$DIR/info"',
          `printf '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"t"}}'`
        ].join("\n")
      )
      const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
      const exec = yield* authentication(
        kubeConfigWith(
          {
            command: recorder.command,
            args: ["get-token", "--cluster", "one two"],
            env: [{ name: "GREETING", value: "hello" }],
            provideClusterInfo: true
          },
          {
            server: "https://api.example:6443",
            caData: Buffer.from(ca).toString("base64"),
            tlsServerName: "api.internal",
            proxyUrl: "http://proxy:3128"
          }
        )
      )
      yield* exec.current
      assert.deepStrictEqual(readFileSync(join(recorder.dir, "args"), "utf8").split("\n"), ["get-token", "--cluster", "one two", ""])
      assert.strictEqual(readFileSync(join(recorder.dir, "greeting"), "utf8"), "hello")
      assert.strictEqual(readFileSync(join(recorder.dir, "home"), "utf8"), process.env["HOME"] ?? "")
      assert.deepStrictEqual(JSON.parse(readFileSync(join(recorder.dir, "info"), "utf8")), {
        kind: "ExecCredential",
        apiVersion: v1,
        spec: {
          cluster: {
            server: "https://api.example:6443",
            "tls-server-name": "api.internal",
            "certificate-authority-data": Buffer.from(ca).toString("base64"),
            "proxy-url": "http://proxy:3128"
          },
          interactive: false
        }
      })
    }).pipe(Effect.scoped)
  )

  it.effect(
    "from a kubeconfig file: a command with a slash is relative to the file's directory; the cluster's exec extension is spec.cluster.config",
    () =>
      Effect.gen(function* () {
        const recorder = plugin(
          `printf '%s' "$KUBERNETES_EXEC_INFO" > "$DIR/info"\nprintf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`
        )
        const file = join(recorder.dir, "kubeconfig")
        writeFileSync(
          file,
          stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [
              {
                name: "c",
                cluster: {
                  server: "https://127.0.0.1:1",
                  "insecure-skip-tls-verify": true,
                  extensions: [{ name: "client.authentication.k8s.io/exec", extension: { audience: "preheat", nested: { n: 1 } } }]
                }
              }
            ],
            // v1beta1 without interactiveMode: IfAvailable, as client-go defaults it.
            users: [
              {
                name: "u",
                user: { exec: { apiVersion: "client.authentication.k8s.io/v1beta1", command: "./plugin.sh", provideClusterInfo: true } }
              }
            ],
            contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
            "current-context": "ctx"
          })
        )
        const config = yield* loadKubeConfig({ kubeconfig: file })
        const exec = yield* authentication(config)
        assert.strictEqual((yield* exec.current).token, "t")
        assert.deepStrictEqual(JSON.parse(readFileSync(join(recorder.dir, "info"), "utf8")), {
          kind: "ExecCredential",
          apiVersion: "client.authentication.k8s.io/v1beta1",
          spec: {
            cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true, config: { audience: "preheat", nested: { n: 1 } } },
            interactive: false
          }
        })
      }).pipe(Effect.scoped)
  )

  it.effect("interactiveMode Always cannot run without a terminal: a clear error before any run; IfAvailable runs without one", () =>
    Effect.gen(function* () {
      const tokens = tokenPlugin()
      const always = yield* Effect.flip(makeExecAuthentication(kubeConfigWith({ command: tokens.command, interactiveMode: "Always" })))
      assert.strictEqual(always._tag, "ExecConfigError")
      assert.include(always.message, tokens.command)
      assert.include(always.message, "standard input is not a terminal")
      const ifAvailable = yield* authentication(kubeConfigWith({ command: tokens.command, interactiveMode: "IfAvailable" }))
      assert.strictEqual((yield* ifAvailable.current).token, "t-1")
      assert.strictEqual(tokens.runs(), 1)
    }).pipe(Effect.scoped)
  )

  it("the kubeconfig's exec section is checked as client-go's clientcmd checks it", () => {
    const userWith = (exec: unknown, rest: Partial<User> = {}): User => ({ name: "u", exec, ...rest })
    const problem = (exec: unknown) => {
      const result = execConfigOf(userWith(exec))
      return Result.isFailure(result) ? result.failure.message : "valid"
    }
    assert.include(problem({ apiVersion: v1, interactiveMode: "Never" }), "command must be given")
    assert.include(problem({ command: "x", interactiveMode: "Never" }), "apiVersion must be one of")
    assert.include(problem({ command: "x", apiVersion: "client.authentication.k8s.io/v1alpha1", interactiveMode: "Never" }), "v1alpha1")
    assert.include(problem({ command: "x", apiVersion: v1 }), "interactiveMode must be given")
    assert.include(problem({ command: "x", apiVersion: v1, interactiveMode: "Sometimes" }), "interactiveMode must be")
    assert.include(problem({ command: "x", apiVersion: v1, interactiveMode: "Never", env: [{ value: "v" }] }), "needs a name")
    assert.strictEqual(
      problem({ command: "x", apiVersion: v1, interactiveMode: "Never", args: ["a"], env: [{ name: "A", value: "v" }] }),
      "valid"
    )
    // As client-go: a token, basic auth or client certificate in the kubeconfig wins over exec.
    const exec = { command: "x", apiVersion: v1, interactiveMode: "Never" }
    assert.isTrue(usesExecPlugin(userWith(exec)))
    assert.isFalse(usesExecPlugin(userWith(exec, { token: "static" })))
    assert.isFalse(usesExecPlugin(userWith(exec, { username: "u", password: "p" })))
    assert.isFalse(usesExecPlugin(userWith(exec, { certData: "Y2VydA==", keyData: "a2V5" })))
    assert.isFalse(usesExecPlugin({ name: "u", token: "static" }))
    // client-node's auth-provider spelling of exec is honoured too.
    assert.isTrue(usesExecPlugin({ name: "u", authProvider: { name: "exec", config: { exec } } }))
  })
})

describe("plugin failures: one error naming the command and the installHint, never the output", () => {
  const installHint = "Install it with:\n  brew install token-helper"
  const secret = "s3cr3t-output"

  const failureOf = (command: string, options: Parameters<typeof makeExecAuthentication>[1] = {}) =>
    Effect.gen(function* () {
      const exec = yield* authentication(kubeConfigWith({ command, installHint }), options)
      const error = yield* Effect.flip(exec.current)
      assert.strictEqual(error._tag, "ExecPluginError")
      assert.include(error.message, command)
      assert.include(error.message, "Install it with: brew install token-helper")
      assert.notInclude(error.message, secret)
      return error.message
    }).pipe(Effect.scoped)

  it.effect("a non-zero exit: its exit code, not its stdout or stderr", () =>
    Effect.gen(function* () {
      const message = yield* failureOf(plugin(`echo "${secret}"\necho "${secret}" >&2\nexit 3`).command)
      assert.include(message, "exit code 3")
    })
  )

  it.effect("output that is not an ExecCredential", () =>
    Effect.gen(function* () {
      assert.include(yield* failureOf(plugin(`echo "{${secret}"`).command), "not JSON")
      assert.include(yield* failureOf(plugin(`echo '{"kind":"Secret","token":"${secret}"}'`).command), "not an ExecCredential")
      const wrongVersion = plugin(`echo '{"apiVersion":"${secret}","kind":"ExecCredential","status":{"token":"${secret}"}}'`)
      assert.include(yield* failureOf(wrongVersion.command), `another apiVersion where the kubeconfig asks for ${v1}`)
      const noStatus = plugin(`echo '{"apiVersion":"${v1}","kind":"ExecCredential"}'`)
      assert.include(yield* failureOf(noStatus.command), "no status")
      const certOnly = plugin(`echo '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"clientCertificateData":"${secret}"}}'`)
      assert.include(yield* failureOf(certOnly.command), "only one of clientCertificateData and clientKeyData")
      const badTime = plugin(
        `echo '{"apiVersion":"${v1}","kind":"ExecCredential","status":{"token":"${secret}","expirationTimestamp":"tomorrow"}}'`
      )
      assert.include(yield* failureOf(badTime.command), "not an RFC 3339 time")
    })
  )

  it.effect("a command that does not exist", () =>
    Effect.gen(function* () {
      assert.include(yield* failureOf(join(root, "no-such-plugin")), "was not found")
    })
  )

  it.effect("a plugin that hangs is stopped at the timeout (1 minute unless set), with its process", () =>
    Effect.gen(function* () {
      const hanging = plugin(`echo $$ > "$DIR/pid"\nexec sleep 600`)
      const exec = yield* authentication(kubeConfigWith({ command: hanging.command, installHint }))
      const fiber = yield* Effect.forkChild(Effect.flip(exec.current))
      const pidFile = join(hanging.dir, "pid")
      // The plugin runs in real time: wait (really) until it started, then let the TestClock pass the timeout.
      yield* Effect.promise(async () => {
        for (let i = 0; i < 600 && !(existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n")); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      })
      yield* TestClock.adjust(Duration.seconds(59))
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust(Duration.seconds(2))
      const error = yield* Fiber.join(fiber)
      assert.include(error.message, hanging.command)
      assert.include(error.message, "no answer within 1m")
      assert.include(error.message, "Install it with")
      const pid = Number(readFileSync(pidFile, "utf8"))
      const alive = yield* Effect.promise(async () => {
        for (let i = 0; i < 600; i++) {
          try {
            process.kill(pid, 0)
          } catch {
            return false
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        return true
      })
      assert.isFalse(alive, "the plugin's process is stopped")
    }).pipe(Effect.scoped)
  )

  it.effect("the timeout is an option", () =>
    Effect.gen(function* () {
      const hanging = plugin("exec sleep 600")
      const exec = yield* authentication(kubeConfigWith({ command: hanging.command }), { pluginTimeout: Duration.seconds(5) })
      const fiber = yield* Effect.forkChild(Effect.exit(exec.current))
      yield* Effect.promise(async () => {
        for (let i = 0; i < 600 && hanging.runs() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
      })
      yield* TestClock.adjust(Duration.seconds(5))
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "no answer within 5s")
    }).pipe(Effect.scoped)
  )
})

describe("parseExecCredential", () => {
  it("reads token, certificate and key, and expiry; a certificate and key must be a pair", () => {
    const token = parseExecCredential(
      JSON.stringify({ apiVersion: v1, kind: "ExecCredential", status: { token: "t", expirationTimestamp: "2030-01-02T03:04:05Z" } }),
      v1
    )
    assert.deepStrictEqual(
      token,
      Result.succeed({ token: "t", clientCertificateData: undefined, clientKeyData: undefined, expiresAt: Date.UTC(2030, 0, 2, 3, 4, 5) })
    )
    const neither = parseExecCredential(JSON.stringify({ apiVersion: v1, kind: "ExecCredential", status: {} }), v1)
    assert.deepStrictEqual(neither, Result.fail("returned neither a token nor a client certificate and key"))
    const notPem = parseExecCredential(
      JSON.stringify({ apiVersion: v1, kind: "ExecCredential", status: { clientCertificateData: "x", clientKeyData: "y" } }),
      v1
    )
    assert.deepStrictEqual(notPem, Result.fail("returned a clientKeyData that is not a PEM private key"))
  })
})
