// The warm gate end to end on the in-memory API server with simulated daemons, on TestClock
// (issue 27): a node that joins with preheat's startup taint loses it once the jobs that must warm
// it succeeded there, at the timeout, or at once when a warming pull fails; other taints stay.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { rfc3339 } from "../../src/api/time.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Clock } from "effect"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const key = "preheat.kruise.io/warming"
const ours = { key, effect: "NoSchedule" }
const gpu = { key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" }

const neverJob = (name: string, image: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, parallelism: 10, completionPolicy: { type: "Never" }, ...extra }
})

/** A node joining now (Ready since now) with these taints, as the kubelet registers it. */
const joining = (name: string, taints: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const node = readyNode(name)
    const since = rfc3339(yield* Clock.currentTimeMillis)
    const api = yield* KubeApi
    yield* api.create(resources.node, {
      ...node,
      spec: { taints },
      status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: since }] }
    })
  })

const taintsOf = (node: KubeObject) => (node["spec"] as { taints?: ReadonlyArray<unknown> } | undefined)?.taints ?? []

const eventsAbout = (name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const events = yield* api.list(resources.event)
    return events.items
      .filter((e) => (e["involvedObject"] as { name?: string }).name === name)
      .map((e) => ({ type: e["type"], reason: e["reason"], message: String(e["message"]) }))
  })

describe("warm before schedule, on an in-memory cluster", () => {
  it.effect("a Never job warms a node that joins tainted; the taint goes only after its pull, other taints stay", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 5000 }, { warmTimeoutMs: 600_000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, neverJob("base", "nginx:1.25.3"))
      yield* advance(8000)
      yield* joining("n2", [gpu, ours])
      yield* advance(3000)
      // Pulling (its NodeImage came at once, without the Ready delay): still held.
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([gpu, ours])
      yield* advance(4000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([gpu])
      const nodeEvents = yield* eventsAbout("n2")
      expect(nodeEvents).toContainEqual(expect.objectContaining({ type: "Normal", reason: "Warmed" }))
      const jobEvents = yield* eventsAbout("base")
      expect(jobEvents).toContainEqual(expect.objectContaining({ type: "Normal", reason: "NodeReleased" }))
      expect(jobEvents.find((e) => e.reason === "NodeReleased")?.message).toContain("node n2 released now that it is warm")
      // The node that was there before never had the taint: no event about it.
      expect((yield* eventsAbout("n1")).filter((e) => e.reason === "Warmed")).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("an annotated Always job gates too; a job that selects other nodes does not", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 20_000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, {
        ...neverJob("rollout", "app:2", { completionPolicy: { type: "Always" } }),
        metadata: { name: "rollout", namespace: "default", annotations: { "preheat.kruise.io/warm-nodes": "true" } }
      })
      yield* api.create(resources.imagePullJob, neverJob("elsewhere", "other:1", { selector: { names: ["n1"] } }))
      yield* joining("n2", [ours])
      yield* advance(15_000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([ours])
      yield* advance(10_000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("released at the warm timeout while still pulling, with Warnings naming what was not warmed", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 300_000 }, { warmTimeoutMs: 60_000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, neverJob("huge", "huge:1"))
      yield* joining("n2", [ours])
      yield* advance(58_000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([ours])
      yield* advance(4000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([])
      const warning = (yield* eventsAbout("n2")).find((e) => e.reason === "ReleasedUnwarmed")
      expect(warning?.type).toBe("Warning")
      expect(warning?.message).toContain("after the warm timeout (60s)")
      expect(warning?.message).toContain("not warmed: job default/huge image huge:1 (pulling")
      const jobWarning = (yield* eventsAbout("huge")).find((e) => e.reason === "NodeReleasedUnwarmed")
      expect(jobWarning?.message).toContain("node n2 released after the warm timeout (60s): image huge:1 not warmed there")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("released at once when a warming pull fails, long before the timeout", () =>
    Effect.gen(function* () {
      yield* startCluster(
        [readyNode("n1")],
        { pullMs: 2000, failure: (node, image) => (node === "n2" && image === "broken" ? "manifest unknown" : undefined) },
        { warmTimeoutMs: 600_000 }
      )
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, neverJob("ok", "nginx:1"))
      yield* api.create(resources.imagePullJob, neverJob("broken", "broken:1", { pullPolicy: { backoffLimit: 0 } }))
      yield* joining("n2", [ours])
      yield* advance(6000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([])
      const warning = (yield* eventsAbout("n2")).find((e) => e.reason === "ReleasedUnwarmed")
      expect(warning?.message).toContain("because a warming pull failed")
      expect(warning?.message).toContain("job default/broken image broken:1 (manifest unknown)")
      // Both pulls were under way together: the other job hears of the release too.
      expect((yield* eventsAbout("ok")).map((e) => e.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/^NodeReleased/)]))
      expect((yield* eventsAbout("broken")).map((e) => e.reason)).toContain("NodeReleasedUnwarmed")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("never adds the taint, and leaves the same key with another effect alone", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, neverJob("base", "nginx:1"))
      const noExecute = { key, effect: "NoExecute" }
      yield* joining("n2", [noExecute])
      yield* advance(10_000)
      expect(taintsOf(yield* get(resources.node, "n1"))).toEqual([])
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([noExecute])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})

/**
 * The in-memory API server, where another writer adds a taint to a Node just before each of
 * preheat's writes to it lands: the race the conditional write is for.
 */
const racingLayer = Layer.mergeAll(
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const inner = yield* KubeApi
      let raced = 0
      return KubeApi.of({
        ...inner,
        patch: (resource, objectKey, patch, subresource) =>
          Effect.gen(function* () {
            if (resource.plural === "nodes" && subresource === undefined && Array.isArray(patch) && raced === 0) {
              raced++
              const node = yield* inner.get(resource, objectKey)
              const taints = [...taintsOf(node), { key: "racer", effect: "NoSchedule" }]
              yield* inner.patch(resource, objectKey, { spec: { taints } })
            }
            return yield* inner.patch(resource, objectKey, patch, subresource)
          })
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer)),
  SchedulerLive.layer()
)

describe("the conditional write", () => {
  it.effect("a taint another writer adds while preheat removes its own is kept", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      yield* joining("n2", [ours])
      yield* advance(5000)
      expect(taintsOf(yield* get(resources.node, "n2"))).toEqual([{ key: "racer", effect: "NoSchedule" }])
    }).pipe(Effect.scoped, Effect.provide(racingLayer))
  )
})
