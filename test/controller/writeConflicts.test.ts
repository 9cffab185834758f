import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { Conflict } from "../../src/kube/errors.ts"
import { isJsonPatch, KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, readyNode } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

/**
 * The in-memory API server, except that the controller's first `conflicts` task writes to a
 * NodeImage conflict, as they do when another job's write lands between the store's version and
 * the write.
 */
const conflicting = (conflicts: number) =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const api = yield* KubeApi
      let left = conflicts
      return KubeApi.of({
        ...api,
        patch: (resource, key, patch, subresource) => {
          const taskWrite = resource === resources.nodeImage && subresource === undefined && (isJsonPatch(patch) || "spec" in patch)
          if (taskWrite && left-- > 0) {
            return Effect.fail(new Conflict({ kind: "NodeImage", objectName: key.name, message: "the object has been modified" }))
          }
          return api.patch(resource, key, patch, subresource)
        }
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer))

describe("a job whose NodeImage writes conflict", () => {
  it.effect("looks again within a second instead of backing off further with every conflict", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.node, readyNode("n1"))
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* simulateDaemons({ pullMs: 1000 })
      yield* advance(31_000)
      yield* api.create(resources.imagePullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImagePullJob",
        metadata: { name: "busy", namespace: "default" },
        spec: { image: "nginx:1.25" }
      })
      // 14 conflicts in a row with no newer version arriving: each is tried again after 1 s, where a
      // backoff doubling from 5 ms would have waited 80 s in all.
      yield* advance(20_000, 100)
      const status = (yield* get(resources.imagePullJob, "busy", "default"))["status"]
      expect(status).toMatchObject({ desired: 1, succeeded: 1, message: "job has completed" })
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(conflicting(14), SchedulerLive.layer())))
  )
})
