import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

// What the reconciler's books keep per job is forgotten with the job: test/controller/imagePullJobState.test.ts.
describe("a deleted job", () => {
  it.effect("leaves nothing in the job store, even when the answer to the finalizer's removal comes after its DELETED event", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      for (const name of ["n1", "n2"]) yield* api.create(resources.node, readyNode(name))
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* simulateDaemons({ pullMs: 1000 })
      yield* advance(31_000)
      for (const name of ["a", "b"]) {
        yield* api.create(resources.imagePullJob, {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "ImagePullJob",
          metadata: { name, namespace: "default" },
          spec: { image: `nginx:${name === "a" ? "1.25" : "1.26"}`, parallelism: 2, completionPolicy: { type: "Never" } }
        })
      }
      yield* advance(5000)
      const deleting = yield* api.delete(resources.imagePullJob, { name: "a", namespace: "default" })
      expect(deleting?.metadata.finalizers?.length).toBe(1)
      yield* advance(5000)
      expect((yield* Effect.flip(get(resources.imagePullJob, "a", "default")))._tag).toBe("NotFound")
      // The finalizer is gone and so is the job: nothing of it may stay in the store, even when the
      // answer to the PATCH that removed the finalizer comes after the DELETED event (as it mostly
      // does in `preheat dev`): the job as last stored, at a later version.
      const lastStored = {
        ...deleting!,
        metadata: { ...deleting!.metadata, resourceVersion: String(Number(deleting!.metadata.resourceVersion) + 1) }
      }
      yield* controller.stores.jobs.written(lastStored)
      expect([...controller.stores.jobs.values()].map((job) => job.metadata.name)).toEqual(["b"])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
