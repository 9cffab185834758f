import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { isJsonPatch, KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, readyNode } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

/**
 * The in-memory API server, except that a task write to a NodeImage takes 50 ms to reach it (as
 * over HTTP), so writes sent side by side are in flight together; counts the ones refused.
 */
const slowTaskWrites = (counts: { sent: number; conflicts: number }) =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const api = yield* KubeApi
      return KubeApi.of({
        ...api,
        patch: (resource, key, patch, subresource) => {
          const taskWrite = resource === resources.nodeImage && subresource === undefined && (isJsonPatch(patch) || "spec" in patch)
          if (!taskWrite) return api.patch(resource, key, patch, subresource)
          counts.sent++
          return Effect.sleep(50).pipe(
            Effect.andThen(api.patch(resource, key, patch, subresource)),
            Effect.tapErrorTag("Conflict", () => Effect.sync(() => counts.conflicts++))
          )
        }
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer))

const counts = { sent: 0, conflicts: 0 }

describe("jobs started together on the same nodes", () => {
  it.effect("write each NodeImage in turn: none of their task writes conflicts", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const nodes = ["n1", "n2", "n3"]
      for (const node of nodes) yield* api.create(resources.node, readyNode(node))
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* simulateDaemons({ pullMs: 1000 })
      yield* advance(31_000)
      const images = ["nginx:1.25", "redis:7", "busybox:1.36", "alpine:3.20"]
      for (const [i, image] of images.entries()) {
        yield* api.create(resources.imagePullJob, {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "ImagePullJob",
          metadata: { name: `job-${i}`, namespace: "default" },
          spec: { image, parallelism: 3 }
        })
      }
      yield* advance(30_000, 50)
      for (const i of images.keys()) {
        const status = (yield* get(resources.imagePullJob, `job-${i}`, "default"))["status"]
        expect(status).toMatchObject({ desired: 3, succeeded: 3, message: "job has completed" })
      }
      // One task per node and job.
      expect(counts).toEqual({ sent: nodes.length * images.length, conflicts: 0 })
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(slowTaskWrites(counts), SchedulerLive.layer())))
  )
})
