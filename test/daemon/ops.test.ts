import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { serveDaemon } from "../../src/daemon/daemon.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, createNodeImage, launch, node, secretNamespace, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const get = (port: number, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`)
    return { status: response.status, body: await response.text() }
  })

describe("daemon: metrics", () => {
  it.effect("counts pulls by result and reason, times them, adds up bytes and shows the workers", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.fail("app:bad", { kind: "Unauthorized", times: "always" })
      yield* createNodeImage({
        app: { tags: [tag("good"), tag("bad", { pullPolicy: { backoffLimit: 0 } }), tag("here")] }
      })
      yield* fake.addImage({ references: ["app:here"], id: `sha256:${"c".repeat(64)}` })
      yield* launch({ maxConcurrentPulls: 1 })
      yield* advance(1000)
      expect(yield* metrics.read("preheat_pulls_total", { result: "succeeded", reason: "pulled" })).toBe(1)
      expect(yield* metrics.read("preheat_pulls_total", { result: "succeeded", reason: "present" })).toBe(1)
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "unauthorized" })).toBe(1)
      expect(yield* metrics.read("preheat_pull_duration_seconds")).toBe(3)
      expect(yield* metrics.read("preheat_pulled_bytes_total")).toBe(10 * 1024 * 1024)
      expect(yield* metrics.read("preheat_pull_workers", { state: "active" })).toBe(0)
      expect(yield* metrics.read("preheat_pull_workers", { state: "waiting" })).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: health", () => {
  it.effect("healthy when the runtime answers Version and the NodeImage has been listed", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const daemon = yield* launch()
      expect(daemon.hasSynced()).toBe(true)
      expect(yield* daemon.health).toEqual([
        { name: "runtime", ok: true, message: "simulated 0.0.0" },
        { name: "nodeimage-watch", ok: true }
      ])
      yield* fake.setAvailable(false)
      expect((yield* daemon.health)[0]).toEqual({ name: "runtime", ok: false, message: "simulated runtime is unavailable" })
      expect(yield* daemon.ready).toEqual([{ name: "nodeimage-watch", ok: true }])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: ops endpoint", () => {
  it.live("serves /healthz, /readyz and /metrics next to the daemon", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      const { daemon, port } = yield* serveDaemon(
        daemonOptions({
          nodeName: node,
          secretNamespace,
          metricsHost: "127.0.0.1",
          metricsPort: 0
        })
      )
      yield* daemon.synced
      expect(yield* get(port, "/healthz")).toEqual({ status: 200, body: "ok" })
      expect(yield* get(port, "/readyz")).toEqual({ status: 200, body: "ok" })
      while ((yield* tagStatus("nginx", "1.25"))?.phase !== "Succeeded") yield* Effect.sleep("10 millis")
      const metrics = yield* get(port, "/metrics")
      expect(metrics.body).toContain('preheat_pulls_total{result="succeeded",reason="pulled"} 1')
      expect(metrics.body).toContain("preheat_pull_duration_seconds_count 1")
      expect(metrics.body).toContain('preheat_pull_workers{state="waiting"} 0')
      yield* fake.setAvailable(false)
      expect(yield* get(port, "/healthz")).toEqual({
        status: 503,
        body: "[-]runtime failed: simulated runtime is unavailable\nhealthz check failed\n"
      })
    }).pipe(
      Effect.scoped,
      Effect.provide(testLayer({ latency: "20 millis" })),
      Effect.provide(loggingLayer({ format: "json", sink: () => undefined }))
    )
  )
})
