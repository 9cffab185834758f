// A bearer token read from a file, as client-go reads one: a kubeconfig's `tokenFile` (client-node
// does not know the key) and the in-cluster service account's token go through one reader in the
// transport. A real file and a server that checks the bearer token of every request; the minute
// between reads on TestClock.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect, Logger, References, Stream } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { loadKubeConfig } from "../../../../layers/kube/live/kubeConfig.ts"
import { makeRateLimiter } from "../../../../layers/kube/live/rateLimiter.ts"
import type { RequestTarget } from "../../../../layers/kube/live/statusErrors.ts"
import { makeTransport, type Transport } from "../../../../layers/kube/live/transport.ts"
import { watchStream } from "../../../../layers/kube/live/watchStream.ts"
import { resources } from "../../../../src/kube/resources.ts"

interface Server {
  readonly url: string
  /** The bearer token of each request, in order. */
  readonly tokens: Array<string | undefined>
}

const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns", resourceVersion: "1" } }

/** Answers every request with a pod (a watch: one ADDED event, then the end), recording its bearer token. */
const startServer: Effect.Effect<Server, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ readonly server: http.Server; readonly state: Server }>((resolve) => {
        const tokens: Array<string | undefined> = []
        const server = http.createServer((request, response) => {
          tokens.push(request.headers.authorization?.replace(/^Bearer /, ""))
          response.writeHead(200, { "content-type": "application/json" })
          const watch = new URL(request.url ?? "/", "http://server").searchParams.get("watch") === "true"
          response.end(watch ? `${JSON.stringify({ type: "ADDED", object: pod })}\n` : JSON.stringify(pod))
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ server, state: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tokens } })
        )
      })
  ),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
).pipe(Effect.map(({ state }) => state))

/** A kubeconfig file whose user reads its token from `tokenFile` (relative to the kubeconfig's folder, as client-go resolves it). */
const kubeconfigFile = (server: Server, user: string): { readonly dir: string; readonly path: string } => {
  const dir = mkdtempSync(join(tmpdir(), "preheat-token-file-"))
  const path = join(dir, "config")
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${server.url}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {${user}}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
  )
  return { dir, path }
}

const transportFor = (config: KubeConfig) =>
  makeTransport(config, {
    userAgent: "token-file-test",
    limiter: makeRateLimiter({ qps: 1000, burst: 1000 }),
    requestTimeout: Duration.seconds(30),
    // A failed read is not retried here: a retry's backoff would wait on the TestClock.
    maxRetries: 0
  })

const target: RequestTarget = { verb: "get", resource: resources.pod, name: "p", namespace: "ns" }
const get = (transport: Transport) =>
  Effect.map(transport.send({ method: "GET", path: "/api/v1/namespaces/ns/pods/p" }, target), (answer) => answer.status)

const lines: Array<string> = []
const capture = Logger.layer([
  Logger.make((options) =>
    lines.push(`${options.logLevel} ${String(options.message)} ${JSON.stringify(options.fiber.getRef(References.CurrentLogAnnotations))}`)
  )
])

describe("a kubeconfig's tokenFile", () => {
  it.effect("is read again once the token read is a minute old; a failed read keeps the last token, said once", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const { dir, path } = kubeconfigFile(server, "tokenFile: token")
      const tokenPath = join(dir, "token")
      writeFileSync(tokenPath, "token-1\n")
      lines.length = 0
      const transport = yield* transportFor(yield* loadKubeConfig({ kubeconfig: path }))
      assert.strictEqual(yield* get(transport), 200)

      // Rotated: the token read a minute ago at most is used until then.
      writeFileSync(tokenPath, "token-2")
      yield* TestClock.adjust(Duration.seconds(59))
      assert.strictEqual(yield* get(transport), 200)
      yield* TestClock.adjust(Duration.seconds(2))
      assert.strictEqual(yield* get(transport), 200)
      assert.deepStrictEqual(server.tokens, ["token-1", "token-1", "token-2"])

      // Gone for two minutes: the last token goes on, one WARN naming the file says so.
      rmSync(tokenPath)
      for (let i = 0; i < 2; i++) {
        yield* TestClock.adjust(Duration.seconds(61))
        assert.strictEqual(yield* get(transport), 200)
      }
      assert.deepStrictEqual(server.tokens.slice(3), ["token-2", "token-2"])
      const warnings = lines.filter((line) => line.startsWith("Warn"))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], "token file unreadable: the token read before is used until a read works")
      assert.include(warnings[0], tokenPath)

      // Back: read at the next minute, on requests and watches alike.
      writeFileSync(tokenPath, "token-3")
      yield* TestClock.adjust(Duration.seconds(61))
      assert.strictEqual(yield* get(transport), 200)
      const events = yield* watchStream(
        transport,
        makeRateLimiter({ qps: 1000, burst: 1000 }),
        { path: "/api/v1/namespaces/ns/pods", query: {}, idleTimeoutMillis: 60_000 },
        { verb: "watch", resource: resources.pod, name: "", namespace: "ns" }
      ).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        Array.from(events, (event) => event.type),
        ["ADDED"]
      )
      assert.deepStrictEqual(server.tokens.slice(5), ["token-3", "token-3"])
      assert.isTrue(lines.some((line) => line.startsWith("Info token file read again")))
      // The token itself is never logged.
      for (const token of ["token-1", "token-2", "token-3"]) assert.notInclude(lines.join("\n"), token)
    }).pipe(Effect.scoped, Effect.provide(capture))
  )

  it.effect("never read: the request is not sent and fails naming the file, as an API access problem with the credentials", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const { dir, path } = kubeconfigFile(server, "tokenFile: missing-token")
      const transport = yield* transportFor(yield* loadKubeConfig({ kubeconfig: path }))
      const error = yield* Effect.flip(transport.send({ method: "GET", path: "/api/v1/namespaces/ns/pods/p" }, target))
      assert.strictEqual(error._tag, "Unavailable")
      assert.strictEqual(error.connection?._tag, "NoCredential")
      assert.include(error.message, `cannot read the token file ${join(dir, "missing-token")}`)
      assert.deepStrictEqual(server.tokens, [])
      // An empty file is no token either.
      writeFileSync(join(dir, "missing-token"), " \n")
      const empty = yield* Effect.flip(transport.send({ method: "GET", path: "/api/v1/namespaces/ns/pods/p" }, target))
      assert.include(empty.message, `the token file ${join(dir, "missing-token")} is empty`)
      assert.deepStrictEqual(server.tokens, [])
    }).pipe(Effect.scoped)
  )

  it.effect("gives way to an inline token, as client-go documents", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const { dir, path } = kubeconfigFile(server, "token: inline-token, tokenFile: token")
      writeFileSync(join(dir, "token"), "file-token")
      const transport = yield* transportFor(yield* loadKubeConfig({ kubeconfig: path }))
      assert.strictEqual(yield* get(transport), 200)
      assert.deepStrictEqual(server.tokens, ["inline-token"])
    }).pipe(Effect.scoped)
  )
})

describe("the in-cluster service account token", () => {
  it.effect("is read by the same reader: rotated within a minute, and a failed read keeps the last token", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const dir = mkdtempSync(join(tmpdir(), "preheat-sa-token-"))
      const tokenPath = join(dir, "token")
      writeFileSync(tokenPath, "sa-token-1")
      // What client-node's loadFromCluster makes of the pod's service account.
      const config = new KubeConfig()
      config.loadFromOptions({
        clusters: [{ name: "inCluster", server: server.url, skipTLSVerify: true }],
        users: [{ name: "inClusterUser", authProvider: { name: "tokenFile", config: { tokenFile: tokenPath } } }],
        contexts: [{ name: "inClusterContext", cluster: "inCluster", user: "inClusterUser" }],
        currentContext: "inClusterContext"
      })
      const transport = yield* transportFor(config)
      assert.strictEqual(yield* get(transport), 200)
      writeFileSync(tokenPath, "sa-token-2")
      yield* TestClock.adjust(Duration.seconds(61))
      assert.strictEqual(yield* get(transport), 200)
      rmSync(tokenPath)
      yield* TestClock.adjust(Duration.seconds(61))
      assert.strictEqual(yield* get(transport), 200)
      assert.deepStrictEqual(server.tokens, ["sa-token-1", "sa-token-2", "sa-token-2"])
    }).pipe(Effect.scoped)
  )
})
