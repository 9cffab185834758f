import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Ref, Scope } from "effect"
import { prometheusContentType } from "prom-client"
import { Metrics } from "../../src/ops/metrics.ts"
import { type HealthReport, OpsServerError, serveOps } from "../../src/ops/server.ts"

const get = (port: number, path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, init)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

const passing: HealthReport = [
  { name: "ping", ok: true },
  { name: "informers", ok: true }
]

/** A server whose readiness the test flips through a Ref. */
const start = Effect.gen(function* () {
  const readiness = yield* Ref.make<HealthReport>(passing)
  const { port } = yield* serveOps({
    port: 0,
    host: "127.0.0.1",
    health: Effect.succeed(passing),
    ready: Ref.get(readiness)
  })
  return { port, readiness }
})

describe("serveOps", () => {
  it.live("binds a free port when asked for port 0", () =>
    Effect.gen(function* () {
      const { port } = yield* start
      expect(port).toBeGreaterThan(0)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("healthz and readyz answer 200 ok while every check passes", () =>
    Effect.gen(function* () {
      const { port } = yield* start
      expect(yield* get(port, "/healthz")).toEqual({ status: 200, type: "text/plain; charset=utf-8", body: "ok" })
      expect((yield* get(port, "/readyz")).body).toBe("ok")
      expect((yield* get(port, "/healthz", { method: "HEAD" })).status).toBe(200)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("?verbose lists every check, like kube-apiserver", () =>
    Effect.gen(function* () {
      const { port } = yield* start
      expect(yield* get(port, "/healthz?verbose")).toMatchObject({
        status: 200,
        body: "[+]ping ok\n[+]informers ok\nhealthz check passed\n"
      })
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("readyz answers 503 with the failing checks, one per line", () =>
    Effect.gen(function* () {
      const { port, readiness } = yield* start
      yield* Ref.set(readiness, [
        { name: "ping", ok: true },
        { name: "informers", ok: false, message: "nodes not synced" },
        { name: "leader", ok: false }
      ])
      expect(yield* get(port, "/readyz")).toMatchObject({
        status: 503,
        body: "[-]informers failed: nodes not synced\n[-]leader failed: reason unknown\nreadyz check failed\n"
      })
      expect((yield* get(port, "/readyz?verbose")).body).toBe(
        "[+]ping ok\n[-]informers failed: nodes not synced\n[-]leader failed: reason unknown\nreadyz check failed\n"
      )
      yield* Ref.set(readiness, passing)
      expect((yield* get(port, "/readyz")).status).toBe(200)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("a check that fails or dies makes the probe fail instead of the server", () =>
    Effect.gen(function* () {
      const { port } = yield* serveOps({
        port: 0,
        host: "127.0.0.1",
        health: Effect.fail("store unreachable"),
        ready: Effect.die(new Error("boom"))
      })
      expect(yield* get(port, "/healthz")).toMatchObject({
        status: 503,
        body: "[-]checks failed: store unreachable\nhealthz check failed\n"
      })
      const ready = yield* get(port, "/readyz")
      expect(ready.status).toBe(503)
      expect(ready.body).toContain("[-]checks failed: Error: boom")
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("metrics answers with prom-client's content type and the registry's families", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.setLeader(true)
      const { port } = yield* start
      const response = yield* get(port, "/metrics")
      expect(response.status).toBe(200)
      expect(response.type).toBe(prometheusContentType)
      expect(response.body).toContain("# TYPE preheat_leader gauge\npreheat_leader 1\n")
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("unknown paths are 404 and other methods 405", () =>
    Effect.gen(function* () {
      const { port } = yield* start
      expect((yield* get(port, "/")).status).toBe(404)
      expect((yield* get(port, "/healthz/extra")).status).toBe(404)
      expect((yield* get(port, "/metrics", { method: "POST", body: "x" })).status).toBe(405)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("stops listening when its scope closes, even with keep-alive connections and a hanging check", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { port } = yield* serveOps({
        port: 0,
        host: "127.0.0.1",
        health: Effect.succeed(passing),
        ready: Effect.never
      }).pipe(Scope.provide(scope))
      expect((yield* get(port, "/healthz")).status).toBe(200) // leaves a keep-alive connection open
      const hanging = fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => "closed"
      )
      yield* Effect.sleep("50 millis")
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - started).toBeLessThan(1000)
      expect(yield* Effect.promise(() => hanging)).toBe("closed")
      const after = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          () => "open",
          () => "refused"
        )
      )
      expect(after).toBe("refused")
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.live("fails with OpsServerError when the port is taken", () =>
    Effect.gen(function* () {
      const { port } = yield* start
      const error = yield* serveOps({ port, host: "127.0.0.1", health: Effect.succeed([]), ready: Effect.succeed([]) }).pipe(Effect.flip)
      expect(error).toBeInstanceOf(OpsServerError)
      expect(error.message).toContain(`cannot listen on 127.0.0.1:${port}`)
    }).pipe(Effect.provide(Metrics.layerTest))
  )
})
