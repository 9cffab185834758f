// The seed's spelling `spec.pullPolicy.type` (issue 26) through the whole controller on the
// in-memory API server: the pull follows it when imagePullPolicy is unset, a DeprecatedField
// warning names the field to use, once per generation, and the ImageListPullJob's children carry
// upstream's spelling only. (The API server's refusal of the two disagreeing: test/harness/apiserver/validation.test.ts.)
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, inVersion, readyNode, startCluster } from "../support/controllerHarness.ts"

const job = (kind: "ImagePullJob" | "ImageListPullJob", name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1beta1",
  kind,
  metadata: { name, namespace: "default" },
  spec
})

const v1beta1ImagePullJobs = inVersion(resources.imagePullJob, "v1beta1")

const eventsAbout = (name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resources.event, { namespace: "default" })).items
      .filter((e) => (e["involvedObject"] as { name: string }).name === name && e["reason"] === "DeprecatedField")
      .map((e) => ({ type: e["type"], message: e["message"] }))
  })

/** The pull policy each node's NodeImage carries for the tag. */
const nodePolicies = (image: string, tag: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resources.nodeImage)).items.map((n) => {
      const images = (n["spec"] as { images?: Record<string, { tags: ReadonlyArray<{ tag: string; imagePullPolicy?: string }> }> }).images
      return images?.[image]?.tags.find((t) => t.tag === tag)?.imagePullPolicy
    })
  })

const unset = "spec.pullPolicy.type is deprecated: use spec.imagePullPolicy (pulling with Always, as spec.pullPolicy.type says)"

describe("the deprecated spec.pullPolicy.type (issue 26)", () => {
  it.effect("an ImagePullJob pulls with it when imagePullPolicy is unset; one DeprecatedField warning per generation", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(v1beta1ImagePullJobs, job("ImagePullJob", "seed", { image: "nginx:latest", pullPolicy: { type: "Always" } }))
      yield* advance(10_000)
      expect(yield* nodePolicies("nginx", "latest")).toEqual(["Always", "Always"])
      const done = yield* get(resources.imagePullJob, "seed", "default")
      expect(done["status"]).toMatchObject({ succeeded: 2, observedGeneration: 1 })
      expect(done["spec"]).not.toHaveProperty("imagePullPolicy")
      // Many reconciles later (status writes, completion): still the one event.
      yield* advance(30_000)
      expect(yield* eventsAbout("seed")).toEqual([{ type: "Warning", message: unset }])

      // A new generation spelling both the same: one more, saying the old field is not read.
      yield* api.patch(resources.imagePullJob, { name: "seed", namespace: "default" }, { spec: { imagePullPolicy: "Always" } })
      yield* advance(10_000)
      const events = yield* eventsAbout("seed")
      expect(events).toHaveLength(2)
      expect(events).toEqual(
        expect.arrayContaining([
          { type: "Warning", message: unset },
          {
            type: "Warning",
            message: "spec.pullPolicy.type is deprecated: use spec.imagePullPolicy alone (it is set, so spec.pullPolicy.type is not read)"
          }
        ])
      )
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a job without the old spelling gets no DeprecatedField event and pulls IfNotPresent", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(v1beta1ImagePullJobs, job("ImagePullJob", "plain", { image: "nginx:latest" }))
      yield* advance(10_000)
      expect(yield* nodePolicies("nginx", "latest")).toEqual(["IfNotPresent"])
      expect(yield* eventsAbout("plain")).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("an ImageListPullJob: its event once, its children spelt as upstream, pulling with the deprecated value", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(
        inVersion(resources.imageListPullJob, "v1beta1"),
        job("ImageListPullJob", "list", { images: ["redis:7", "busybox:1.36"], pullPolicy: { type: "Always", backoffLimit: 1 } })
      )
      yield* advance(20_000)
      expect(yield* eventsAbout("list")).toEqual([{ type: "Warning", message: unset }])
      const children = (yield* api.list(resources.imagePullJob, { namespace: "default" })).items
      expect(children.map((c) => c["spec"])).toEqual([
        expect.objectContaining({ imagePullPolicy: "Always", pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 } }),
        expect.objectContaining({ imagePullPolicy: "Always", pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 } })
      ])
      for (const child of children) expect(yield* eventsAbout(child.metadata.name ?? "")).toEqual([])
      expect(yield* nodePolicies("redis", "7")).toEqual(["Always"])
      expect((yield* get(resources.imageListPullJob, "list", "default"))["status"]).toMatchObject({ desired: 2, succeeded: 2 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect(
    "an AdvancedCronJob's template: the cron job warned once, its runs spelt as upstream and pulling with the deprecated value",
    () =>
      Effect.gen(function* () {
        yield* startCluster([readyNode("n1")], { pullMs: 1000 })
        const api = yield* KubeApi
        yield* api.create(resources.advancedCronJob, {
          apiVersion: "apps.kruise.io/v1beta1",
          kind: "AdvancedCronJob",
          metadata: { name: "nightly", namespace: "default" },
          spec: {
            schedule: "*/1 * * * *",
            template: { imageListPullJobTemplate: { spec: { images: ["redis:7"], pullPolicy: { type: "Always" } } } }
          }
        })
        // Two runs (60 s, 120 s) and their reconciles.
        yield* advance(100_000)
        const at = "spec.template.imageListPullJobTemplate.spec"
        expect(yield* eventsAbout("nightly")).toEqual([
          {
            type: "Warning",
            message: `${at}.pullPolicy.type is deprecated: use ${at}.imagePullPolicy (pulling with Always, as ${at}.pullPolicy.type says)`
          }
        ])
        const runs = (yield* api.list(resources.imageListPullJob, { namespace: "default" })).items
        expect(runs.map((r) => r.metadata.name).sort()).toEqual(["nightly-120", "nightly-60"])
        for (const run of runs) {
          expect(run["spec"]).toMatchObject({ imagePullPolicy: "Always", pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 } })
          expect((run["spec"] as { pullPolicy: object }).pullPolicy).not.toHaveProperty("type")
          expect(yield* eventsAbout(run.metadata.name ?? "")).toEqual([])
        }
        expect(yield* nodePolicies("redis", "7")).toEqual(["Always"])
      }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
