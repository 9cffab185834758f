/**
 * Registries that throttle (issue 28, part 3) on the in-memory cluster with simulated daemons, on
 * simulated time: nodes reporting RegistryThrottled lower that registry's concurrent pulls
 * (multiplicative decrease, once per burst of reports), pulls that succeed raise it again
 * (additive increase) up to `--max-concurrent-pulls-per-registry`, and the job gets a Warning.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import type { ControllerSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import type { Controller } from "../../src/controller/controller.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

const job = (name: string, image: string, parallelism: number): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, parallelism }
})

const status = (o: KubeObject) => (o["status"] ?? {}) as { active?: number; succeeded?: number; message?: string; completionTime?: string }

const nodes = (n: number) => Array.from({ length: n }, (_, i) => readyNode(`n${String(i).padStart(2, "0")}`))

/** The cluster, with the registry throttling every attempt that ends before `throttleUntil` (ms after the job starts). */
const start = (count: number, throttleUntil: number, settings: Partial<ControllerSettings> = {}) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (const node of nodes(count)) yield* api.create(resources.node, node)
    // Task writes at the instant they are decided: the trace below samples states 100 ms apart, and
    // the task writer's window (20 ms) would move a brief one (0/5) between two samples.
    const controller = yield* makeController({ ...defaultSettings, taskWriteBatchMs: 0, ...settings })
    yield* Effect.forkScoped(controller.reconcile())
    let origin = Number.POSITIVE_INFINITY
    const clock = yield* Clock.Clock
    yield* simulateDaemons({
      pullMs: 1000,
      throttled: (_node, image) => image === "nginx" && clock.currentTimeMillisUnsafe() - origin < throttleUntil
    })
    yield* advance(31_000)
    origin = clock.currentTimeMillisUnsafe()
    return controller
  })

/** What `read` says every 100 ms of simulated time for `millis`. */
const sample = <A>(read: () => A, millis: number) =>
  Effect.gen(function* () {
    const seen: Array<A> = []
    for (let elapsed = 0; elapsed < millis; elapsed += 100) {
      yield* advance(100, 100)
      seen.push(read())
    }
    return seen
  })

/** Nodes pulling `image` as their NodeImages say: its tag handed to them, with no outcome yet. */
const pulling = (controller: Controller, image: string) => {
  let count = 0
  for (const { view } of controller.stores.nodeImages.entries()) {
    for (const tag of view.spec.images?.[image]?.tags ?? []) {
      const reported = view.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === tag.version)
      if (reported?.phase !== "Succeeded" && reported?.phase !== "Failed") count++
    }
  }
  return count
}

const throttleEvents = Effect.gen(function* () {
  const api = yield* KubeApi
  return (yield* api.list(resources.event, { namespace: "default" })).items
    .filter((e) => e["reason"] === "RegistryThrottled")
    .map((e) => e["message"] as string)
})

describe("a registry that throttles", () => {
  it.effect("halves the registry's limit once per burst of reports, then raises it as pulls succeed until it goes away", () =>
    Effect.gen(function* () {
      const controller = yield* start(40, 1500)
      const limitOf = (registry: string) => controller.gauges.registryPullLimits().get(registry)
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("hub", "nginx:1", 10))
      // Ten nodes pull at once; the registry throttles each (one burst of ten reports): 10 -> 5.
      yield* advance(2000, 100)
      expect(limitOf("docker.io")).toBe(5)
      expect(yield* throttleEvents).toEqual(["registry docker.io throttles pulls (HTTP 429): concurrent pulls from it lowered to 5"])
      // The ten retry and succeed at about 4 s (0/5: reported, the job not yet woken by the reports);
      // ten successes raise 5 by 1/5 each, then 1/6: 6. From then on each round of pulls adds one
      // until the limit holds nothing back and goes away (the job's 40 nodes are done by then).
      // Without throttling all rounds would be 10 wide.
      const trace = yield* sample(() => `${pulling(controller, "nginx")}/${limitOf("docker.io") ?? "none"}`, 8000)
      expect(trace.filter((step, i) => step !== trace[i - 1])).toEqual(["10/5", "0/5", "6/6", "7/7", "8/8", "9/9", "0/none"])
      expect(status(yield* get(resources.imagePullJob, "hub", "default"))).toMatchObject({
        succeeded: 40,
        completionTime: expect.any(String)
      })
      expect(controller.gauges.registryPullLimits().has("docker.io")).toBe(false)
      expect(yield* throttleEvents).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("with --max-concurrent-pulls-per-registry, lowers it and raises it back to the flag's value, never above", () =>
    Effect.gen(function* () {
      const controller = yield* start(40, 1500, { maxConcurrentPullsPerRegistry: 6 })
      const limitOf = (registry: string) => controller.gauges.registryPullLimits().get(registry)
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("hub", "nginx:1", 20))
      yield* api.create(resources.imagePullJob, job("quay", "quay.io/org/app:1", 20))
      yield* advance(2000, 100)
      // Only docker.io throttles: quay.io keeps the flag's limit.
      expect([...controller.gauges.registryPullLimits()].sort()).toEqual([
        ["docker.io", 3],
        ["quay.io", 6]
      ])
      expect(yield* throttleEvents).toEqual(["registry docker.io throttles pulls (HTTP 429): concurrent pulls from it lowered from 6 to 3"])
      const seen = yield* sample(() => [limitOf("docker.io"), pulling(controller, "nginx")] as const, 30_000)
      // The gauge shows a registry's limit while nodes pull from it or throttling set one.
      const limits = seen.flatMap(([limit]) => (limit === undefined ? [] : [limit]))
      const inFlight = seen.map(([, count]) => count)
      expect([Math.min(...limits), Math.max(...limits), Math.max(...inFlight), limits.at(-1)]).toEqual([3, 6, 6, 6])
      expect(status(yield* get(resources.imagePullJob, "hub", "default"))).toMatchObject({ succeeded: 40 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
