import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import type { ImageSpec } from "../../src/api/nodeImage.ts"
import { patchNodeImages } from "../../src/controller/writes.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"

const entry = (tag: string): ImageSpec => ({ tags: [{ tag, version: 0, imagePullPolicy: "IfNotPresent" }] }) as unknown as ImageSpec

const specOf = (object: KubeObject) => object["spec"] as { images?: Record<string, ImageSpec> }

/** A NodeImage on the in-memory API server and a store holding the version just read. */
const setUp = (spec: Record<string, unknown>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const created = yield* api.create(resources.nodeImage, {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "NodeImage",
      metadata: { name: "n1" },
      spec
    })
    const store = makeStore(resources.nodeImage)
    yield* store.written(created)
    return { api, store }
  })

const read = Effect.flatMap(Effect.service(KubeApi), (api) => api.get(resources.nodeImage, { name: "n1" }))

describe("a job's write of its entries to a NodeImage", () => {
  it.effect("goes through a daemon's status report that landed since the store's version", () =>
    Effect.gen(function* () {
      const { api, store } = yield* setUp({ images: { "docker.io/library/nginx": entry("1.25") } })
      yield* api.patch(resources.nodeImage, { name: "n1" }, { status: { desired: 1, pulling: 1 } }, "status")
      yield* patchNodeImages(store, "n1", new Map([["registry.example.com/team/app", entry("v1")]]))
      const stored = yield* read
      expect(Object.keys(specOf(stored).images ?? {}).sort()).toEqual(["docker.io/library/nginx", "registry.example.com/team/app"])
      expect(stored["status"]).toMatchObject({ desired: 1, pulling: 1 })
      // The store has the written version at once.
      expect(store.get("n1")?.metadata.resourceVersion).toBe(stored.metadata.resourceVersion)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("is a Conflict when another write changed the spec since, and leaves that write alone", () =>
    Effect.gen(function* () {
      const { api, store } = yield* setUp({ images: { nginx: entry("1.25") } })
      yield* api.patch(resources.nodeImage, { name: "n1" }, { spec: { images: { redis: entry("7") } } })
      const error = yield* Effect.flip(patchNodeImages(store, "n1", new Map([["nginx", undefined]])))
      expect(error._tag).toBe("Conflict")
      expect(Object.keys(specOf(yield* read).images ?? {}).sort()).toEqual(["nginx", "redis"])
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("removes and replaces entries, and adds the first one to an empty spec", () =>
    Effect.gen(function* () {
      const { store } = yield* setUp({})
      yield* patchNodeImages(
        store,
        "n1",
        new Map([
          ["a~b/c", entry("1")],
          ["nginx", entry("1.25")]
        ])
      )
      yield* patchNodeImages(
        store,
        "n1",
        new Map([
          ["a~b/c", undefined],
          ["nginx", entry("1.26")]
        ])
      )
      const images = specOf(yield* read).images ?? {}
      expect(Object.keys(images)).toEqual(["nginx"])
      expect(images["nginx"]?.tags[0]?.tag).toBe("1.26")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("with labels, is a merge patch on the resourceVersion: a status report since makes it a Conflict", () =>
    Effect.gen(function* () {
      const { api, store } = yield* setUp({})
      yield* api.patch(resources.nodeImage, { name: "n1" }, { status: { desired: 0 } }, "status")
      const error = yield* Effect.flip(patchNodeImages(store, "n1", new Map(), { zone: "a" }))
      expect(error._tag).toBe("Conflict")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
