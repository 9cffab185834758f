// The live client against a server that refuses it: a 401 and a 403 are told apart, neither is
// retried as a 5xx is, ApiAccess says them at WARN and /readyz names them.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import type { Scope } from "effect"
import { KubeLive } from "../../../../layers/kube/live/kubeLive.ts"
import { ApiAccess } from "../../../../src/kube/ApiAccess.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import { resources } from "../../../../src/kube/resources.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { serveOps } from "../../../../src/ops/server.ts"
import { localServer } from "../../../support/localServer.ts"

const token = "access-t0ken-VALUE"

interface Refusing {
  readonly url: string
  readonly kubeconfig: string
  /** Requests received, by path. */
  readonly received: Array<string>
}

/** A server answering `code` with a Status to everything, and a kubeconfig (token) for it. */
const refusing = (code: number, reason: string, message: string): Effect.Effect<Refusing, never, Scope.Scope> => {
  const received: Array<string> = []
  return Effect.map(
    localServer((request, response) => {
      received.push(request.url ?? "")
      response.writeHead(code, { "content-type": "application/json" })
      response.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message }))
    }),
    ({ url }) => {
      const kubeconfig = join(mkdtempSync(join(tmpdir(), "preheat-access-")), "config")
      writeFileSync(
        kubeconfig,
        `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${url}", insecure-skip-tls-verify: true}
users:
- name: operator
  user: {token: ${token}}
contexts:
- name: c
  context: {cluster: c, user: operator}
current-context: c
`
      )
      return { url, kubeconfig, received }
    }
  )
}

const lines: Array<string> = []
const capture = Logger.layer([Logger.make((options) => lines.push(`${options.logLevel} ${String(options.message)}`))])

/** The role's live client (default retries) with its ApiAccess, on `server`. */
const client = (server: Refusing) =>
  KubeLive.layerWithAccess({ kubeconfig: server.kubeconfig, qps: 1000, burst: 1000, userAgent: "preheat-test/1" }).pipe(
    Layer.provideMerge(Metrics.layerTest)
  )

const readyz = (port: number): Effect.Effect<{ readonly status: number; readonly body: string }> =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/readyz?verbose`)
    return { status: response.status, body: await response.text() }
  })

describe("a refused client", () => {
  it.live("a 401 is Unauthorized, asked once (not retried as a 5xx), said at WARN and named by /readyz", () =>
    Effect.gen(function* () {
      const server = yield* refusing(401, "Unauthorized", "Unauthorized")
      lines.length = 0
      yield* Effect.gen(function* () {
        const api = yield* KubeApi
        const access = yield* ApiAccess
        const error = yield* Effect.flip(api.get(resources.nodeImage, { name: "node-1" }))
        assert.strictEqual(error._tag, "Unauthorized")
        assert.strictEqual(error.message, "get NodeImage node-1: 401 Unauthorized")
        // A 5xx read is tried 11 times (liveRetries.test.ts); a 401 goes once.
        assert.strictEqual(server.received.length, 1)
        yield* Effect.flip(api.list(resources.nodeImage))
        const expected = `401 Unauthorized from ${server.url}: the credentials of user "operator" in ${server.kubeconfig} were not accepted`
        assert.deepStrictEqual(lines, [`Warn API access failing: ${expected}`])
        const { port } = yield* serveOps({
          host: "127.0.0.1",
          port: 0,
          health: Effect.succeed([]),
          ready: Effect.map(access.check, (c) => [c])
        })
        const reply = yield* readyz(port)
        assert.strictEqual(reply.status, 503)
        assert.strictEqual(reply.body, `[-]api-access failed: ${expected}\nreadyz check failed\n`)
        assert.notInclude(reply.body, token)
      }).pipe(Effect.provide(client(server)), Effect.provide(capture))
    })
  )

  it.live("a 403 is Forbidden, asked once, naming the RBAC rule in the WARN line and /readyz", () =>
    Effect.gen(function* () {
      const server = yield* refusing(
        403,
        "Forbidden",
        'nodeimages.apps.kruise.io is forbidden: User "operator" cannot list resource "nodeimages" in API group "apps.kruise.io" at the cluster scope'
      )
      lines.length = 0
      yield* Effect.gen(function* () {
        const api = yield* KubeApi
        const access = yield* ApiAccess
        const error = yield* Effect.flip(api.list(resources.nodeImage))
        assert.strictEqual(error._tag, "Forbidden")
        assert.strictEqual(server.received.length, 1)
        const expected =
          "forbidden: list nodeimages.apps.kruise.io cluster-wide (verb=list, group=apps.kruise.io, resource=nodeimages): " +
          'grant it in deploy/rbac.yaml or your ClusterRoleBinding: nodeimages.apps.kruise.io is forbidden: User "operator" cannot list ' +
          'resource "nodeimages" in API group "apps.kruise.io" at the cluster scope'
        assert.strictEqual(error.message, expected)
        assert.deepStrictEqual(lines, [`Warn API access failing: ${expected}`])
        assert.deepStrictEqual(yield* access.check, { name: "api-access", ok: false, message: expected })
      }).pipe(Effect.provide(client(server)), Effect.provide(capture))
    })
  )

  it.live("an exec plugin that gives no credential is said once at WARN, naming its command, and /readyz names it; nothing is sent", () =>
    Effect.gen(function* () {
      const server = yield* refusing(500, "InternalError", "never asked")
      const dir = mkdtempSync(join(tmpdir(), "preheat-plugin-"))
      const plugin = join(dir, "failing-plugin")
      writeFileSync(plugin, "#!/bin/sh\necho 'plugin-secret-OUTPUT' >&2\nexit 3\n", { mode: 0o755 })
      const kubeconfig = join(dir, "config")
      writeFileSync(
        kubeconfig,
        `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${server.url}", insecure-skip-tls-verify: true}
users:
- name: operator
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}, interactiveMode: Never, installHint: "install the plugin"}
contexts:
- name: c
  context: {cluster: c, user: operator}
current-context: c
`
      )
      lines.length = 0
      yield* Effect.gen(function* () {
        const api = yield* KubeApi
        const access = yield* ApiAccess
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* Effect.flip(api.list(resources.nodeImage)))._tag, "Unavailable")
        assert.strictEqual(server.received.length, 0)
        assert.strictEqual(lines.length, 1)
        assert.match(lines[0] ?? "", /^Warn API access failing: .*failing-plugin.*install the plugin/)
        const check = yield* access.check
        assert.strictEqual(check.ok, false)
        assert.include(check.message, plugin)
        assert.notInclude(`${lines.join("\n")}${check.message}`, "plugin-secret-OUTPUT")
      }).pipe(Effect.provide(client({ ...server, kubeconfig })), Effect.provide(capture))
    })
  )
})
