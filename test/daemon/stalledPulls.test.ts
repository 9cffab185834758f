import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, createNodeImage, events, launch, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "app", namespace: "default", uid: "u-app" }

const pulls = Effect.flatMap(Effect.service(SimulatedRuntime), (f) => f.pulls)

describe("daemon: a pull whose bytes stop (--pull-progress-timeout, issue 39 part 4)", () => {
  it.effect("fails the attempt with PullStalled after the timeout, not the attempt's, and the retry pulls the image", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      // 10 MiB in 1 s, in ten steps: the first pull stops at half.
      yield* fake.stall("nginx:1.25")
      yield* createNodeImage({
        nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 }, ownerReferences: [owner] })] }
      })
      yield* launch()
      yield* advance(120_000, 1_000)
      expect((yield* pulls)[0]?.outcome._tag).toBe("InFlight")
      yield* advance(1_000, 100)
      const first = (yield* pulls)[0]
      expect(first).toMatchObject({ outcome: { _tag: "Cancelled" }, endedAt: 120_500 })
      expect((yield* tagStatus("nginx", "1.25"))?.message).toBe(
        "attempt 1 of 2 failed: pull stalled: no bytes received for 120s, at 5Mi of 10Mi (--pull-progress-timeout); retrying in 1s"
      )
      yield* advance(3_000, 100)
      expect(yield* pulls).toHaveLength(2)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded" })
      expect((yield* events).map((e) => e.reason)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("every attempt stalled: the tag fails with the bytes reached, counted as stalled", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.stall("nginx:1.25", { atPercent: 30, times: "always" })
      yield* createNodeImage({
        nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 }, ownerReferences: [owner] })] }
      })
      yield* launch({ pullProgressTimeout: Duration.seconds(30) })
      yield* advance(70_000, 1_000)
      const status = yield* tagStatus("nginx", "1.25")
      expect(status).toMatchObject({
        phase: "Failed",
        message:
          'failed to pull image "nginx:1.25" after 2 attempts: pull stalled: no bytes received for 30s, at 3Mi of 10Mi (--pull-progress-timeout)'
      })
      expect((yield* events).map((e) => [e.type, e.reason])).toEqual([
        ["Warning", "PullImageFailed"],
        ["Warning", "PullImageFailed"]
      ])
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "stalled" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a slow pull whose bytes move every 90 s is let finish in one attempt", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      // Ten steps over 15 minutes.
      yield* fake.setLatency("nginx:1.25", "15 minutes")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 1, timeoutSeconds: 3600 } })] } })
      yield* launch()
      yield* advance(901_000, 1_000)
      expect(yield* pulls).toHaveLength(1)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded" })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("--pull-progress-timeout 0: a stalled pull runs to the attempt's timeout", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.stall("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 0, timeoutSeconds: 300 } })] } })
      yield* launch({ pullProgressTimeout: 0 })
      yield* advance(299_000, 1_000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Pulling")
      yield* advance(2_000, 100)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({
        phase: "Failed",
        message: 'failed to pull image "nginx:1.25": pull timed out after 300s'
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a runtime that shows no byte progress is not watched: its stalled pull runs to the attempt's timeout", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.stall("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 0, timeoutSeconds: 300 } })] } })
      yield* launch()
      yield* advance(301_000, 1_000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({
        phase: "Failed",
        message: 'failed to pull image "nginx:1.25": pull timed out after 300s'
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer({ progressSteps: 0 })))
  )
})
