import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { maxInt32 } from "../../src/api/schemaExtras.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, schemalessHarnessLayer, startCluster, unadmitted } from "../support/controllerHarness.ts"

// Issue 24: an ImagePullJob with very large pullPolicy.timeoutSeconds and backoffLimit was accepted;
// the controller derived a tag TTL above 2^53 from them, the daemon's NodeImage decoder refused
// the whole NodeImage, and every other job on that node stalled at 0 % with no Warning anywhere.

const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec
})

type Tags = ReadonlyArray<{ readonly tag: string; readonly pullPolicy?: Record<string, number> }>
type TagStatuses = ReadonlyArray<{ readonly tag: string; readonly phase: string; readonly message?: string }>

const jobStatus = (name: string) =>
  Effect.map(get(resources.imagePullJob, name, "default"), (o) => o["status"] as Record<string, unknown> | undefined)
const specTags = (node: KubeObject, image: string): Tags =>
  (node["spec"] as { images?: Record<string, { tags: Tags }> }).images?.[image]?.tags ?? []
const statusTags = (node: KubeObject, image: string): TagStatuses =>
  (node["status"] as { imageStatuses?: Record<string, { tags: TagStatuses }> } | undefined)?.imageStatuses?.[image]?.tags ?? []

describe("numeric bounds on the in-memory cluster (issue 24)", () => {
  it.effect("a job at the int32 maxima of timeoutSeconds and backoffLimit, and another job on its node: both complete", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(
        resources.imagePullJob,
        job("huge", { image: "nginx:1", pullPolicy: { timeoutSeconds: maxInt32, backoffLimit: maxInt32 } })
      )
      yield* api.create(resources.imagePullJob, job("small", { image: "redis:7" }))
      yield* advance(5000)
      expect(yield* jobStatus("small")).toMatchObject({ desired: 1, succeeded: 1, message: "job has completed" })
      expect(yield* jobStatus("huge")).toMatchObject({ desired: 1, succeeded: 1, message: "job has completed" })
      // The derived TTL saturates at the tag's int32 maximum instead of passing 2^53.
      const [tag] = specTags(yield* get(resources.nodeImage, "n1"), "nginx")
      expect(tag?.pullPolicy).toMatchObject({ timeoutSeconds: maxInt32, backoffLimit: maxInt32, ttlSecondsAfterFinished: maxInt32 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a job past the int32 bound, written past admission, fails alone and visibly; the node's other job completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* (yield* unadmitted).create(
        resources.imagePullJob,
        job("over", { image: "nginx:1", pullPolicy: { timeoutSeconds: maxInt32 + 1 } })
      )
      yield* api.create(resources.imagePullJob, job("small", { image: "redis:7" }))
      yield* advance(5000)
      expect(yield* jobStatus("small")).toMatchObject({ desired: 1, succeeded: 1, message: "job has completed" })
      const conditions = (yield* jobStatus("over"))?.["conditions"] as ReadonlyArray<Record<string, unknown>>
      expect(conditions[0]).toMatchObject({ type: "Valid", status: "False", reason: "Invalid" })
      expect(conditions[0]?.["message"]).toMatch(/^spec\.pullPolicy\.timeoutSeconds: /)
      const events = yield* api.list(resources.event, { namespace: "default" })
      expect(events.items.map((e) => [(e["involvedObject"] as { name?: string }).name, e["reason"]])).toContainEqual(["over", "Invalid"])
      expect(specTags(yield* get(resources.nodeImage, "n1"), "nginx")).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a tag the daemon cannot read fails alone; the node's other jobs complete", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      // Written past admission (by hand through a server without the CRD's bounds, or by an older controller).
      yield* (yield* unadmitted).patch(
        resources.nodeImage,
        { name: "n1" },
        {
          spec: { images: { busybox: { tags: [{ tag: "1", pullPolicy: { ttlSecondsAfterFinished: 2 ** 62 } }] } } }
        }
      )
      yield* api.create(resources.imagePullJob, job("small", { image: "redis:7" }))
      yield* advance(5000)
      expect(yield* jobStatus("small")).toMatchObject({ desired: 1, succeeded: 1, message: "job has completed" })
      const [failed] = statusTags(yield* get(resources.nodeImage, "n1"), "busybox")
      expect(failed).toMatchObject({ tag: "1", phase: "Failed" })
      expect(failed?.message).toMatch(/^spec\.images\.busybox\.tags\[0\]\.pullPolicy\.ttlSecondsAfterFinished: expected /)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a NodeImage the controller cannot read in part: that part is left alone and announced, every job goes on", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      // Possible only through a server without the CRD's schema: one such NodeImage stopped the controller.
      // (With the schema, every later write of n1's image map is refused: its rules fail on busybox's tags.)
      yield* api.patch(
        resources.nodeImage,
        { name: "n1" },
        { spec: { images: { busybox: { tags: "x" }, alpine: { tags: [{ tag: 5 }] } } } }
      )
      yield* api.create(resources.imagePullJob, job("small", { image: "redis:7", parallelism: 2 }))
      yield* advance(5000)
      expect(yield* jobStatus("small")).toMatchObject({ desired: 2, succeeded: 2, message: "job has completed" })
      const n1 = yield* get(resources.nodeImage, "n1")
      expect((n1["spec"] as { images: Record<string, unknown> }).images["busybox"]).toEqual({ tags: "x" })
      const events = yield* api.list(resources.event, { namespace: "default" })
      const warnings = events.items.filter((e) => e["reason"] === "InvalidNodeImage")
      expect(warnings.map((e) => [(e["involvedObject"] as { name?: string }).name, e["message"]])).toEqual([
        ["n1", "cannot read spec.images.busybox.tags, spec.images.alpine.tags[0]: left alone, the other images go on"]
      ])
    }).pipe(Effect.scoped, Effect.provide(schemalessHarnessLayer))
  )
})
