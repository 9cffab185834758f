import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, createNodeImage, events, launch, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "app", namespace: "default", uid: "u-app" }
const rateLimit = "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit"

const starts = Effect.map(
  Effect.flatMap(Effect.service(SimulatedRuntime), (f) => f.pulls),
  (pulls) => pulls.map((p) => p.startedAt)
)

describe("daemon: a registry that throttles (issue 28, part 3)", () => {
  it.effect("reports RegistryThrottled, retries after the throttle backoff and succeeds with backoffLimit 0", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("nginx:1.25", { kind: "RegistryThrottled", times: 2, message: rateLimit })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 0 }, ownerReferences: [owner] })] } })
      yield* launch()
      // The retry's note goes out with the next rate-limited status write (2 s).
      yield* advance(2100)
      const waiting = yield* tagStatus("nginx", "1.25")
      expect(waiting?.phase).toBe("Pulling")
      expect(waiting?.message).toMatch(
        /^RegistryThrottled: registry throttled the pull: 429 Too Many Requests.*; retrying in [\d.]+s \(throttled retry 1 of 10, not counted against backoffLimit\)$/
      )
      // Backoffs of at most 5 s and 10 s, then a 1 s pull.
      yield* advance(16_000, 500)
      const pulled = yield* starts
      expect(pulled).toHaveLength(3)
      expect(pulled[1]).toBeGreaterThanOrEqual(2500)
      expect(pulled[1]).toBeLessThanOrEqual(5000)
      expect(pulled[2]! - pulled[1]!).toBeGreaterThanOrEqual(5000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded" })
      // No Event for a success, throttled retries before it or not (the tag status says it: issue 29).
      expect((yield* events).map((e) => e.reason)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a registry that keeps throttling fails the tag with reason RegistryThrottled once the throttled retries run out", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.fail("nginx:1.25", { kind: "RegistryThrottled", times: "always", message: rateLimit })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 1 }, ownerReferences: [owner] })] } })
      yield* launch()
      // Ten forgiven retries (at most 5+10+20+40+80+160+4*300 s), then two attempts that count.
      yield* advance(3_000_000, 10_000)
      expect(yield* starts).toHaveLength(12)
      const status = yield* tagStatus("nginx", "1.25")
      expect(status?.phase).toBe("Failed")
      expect(status?.message).toMatch(/^failed to pull image "nginx:1.25" after 2 attempts: registry throttled the pull: 429/)
      expect((yield* events).map((e) => [e.type, e.reason])).toEqual([
        ["Warning", "RegistryThrottled"],
        ["Warning", "RegistryThrottled"]
      ])
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "throttled" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the simulated registry can throttle the first pulls of an image (preheat dev's throttled.* hosts)", () =>
    Effect.gen(function* () {
      yield* createNodeImage({ "throttled.example/app": { tags: [tag("1", { pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch()
      yield* advance(2100)
      expect((yield* tagStatus("throttled.example/app", "1"))?.message).toMatch(
        /^RegistryThrottled: registry throttled the pull: simulated registry: 429/
      )
      yield* advance(16_000, 500)
      expect(yield* starts).toHaveLength(3)
      expect((yield* tagStatus("throttled.example/app", "1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer({ throttles: (ref) => (ref.domain.startsWith("throttled.") ? 2 : 0) })))
  )
})
