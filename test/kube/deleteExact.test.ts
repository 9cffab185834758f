import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { deleteExact } from "../../src/kube/deleteExact.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

const nodeImage = (name: string): KubeObject => ({ apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name }, spec: {} })

describe("deleteExact", () => {
  it.effect("deletes the object it was given", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const seen = yield* api.create(resources.nodeImage, nodeImage("node-a"))
      yield* deleteExact(resources.nodeImage, seen)
      assert.strictEqual((yield* Effect.flip(api.get(resources.nodeImage, { name: "node-a" })))._tag, "NotFound")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("leaves an object re-created under the name alone, and takes a gone one as done", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const seen = yield* api.create(resources.nodeImage, nodeImage("node-b"))
      yield* api.delete(resources.nodeImage, { name: "node-b" })
      const recreated = yield* api.create(resources.nodeImage, nodeImage("node-b"))
      yield* deleteExact(resources.nodeImage, seen)
      const still = yield* api.get(resources.nodeImage, { name: "node-b" })
      assert.strictEqual(still.metadata.uid, recreated.metadata.uid)
      yield* api.delete(resources.nodeImage, { name: "node-b" })
      yield* deleteExact(resources.nodeImage, recreated)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
