import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { InMemoryKubeApi } from "../../layers/inMemoryKubeApi.ts"
import { makeInformer } from "../../src/kube/informer.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

const fresh = (object: KubeObject): KubeObject => JSON.parse(JSON.stringify(object))

/** The in-memory server as a live one looks to a client: every object fresh JSON. */
const asOverTheWire = Layer.effect(
  KubeApi,
  Effect.map(Effect.service(KubeApi), (api) =>
    KubeApi.of({
      ...api,
      list: (resource, options) => Effect.map(api.list(resource, options), (l) => ({ ...l, items: l.items.map(fresh) })),
      watch: (resource, options) =>
        Stream.map(api.watch(resource, options), (e) => (e.type === "BOOKMARK" ? e : { ...e, object: fresh(e.object) }))
    })
  )
).pipe(Layer.provideMerge(InMemoryKubeApi.layer))

const tag = {
  tag: "1.25",
  version: 0,
  createdAt: "2026-12-02T10:00:00Z",
  ownerReferences: [{ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "j", uid: "u1" }]
}
const nodeImage = (name: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name },
  spec: { images: { nginx: { tags: [tag] } } }
})
const imagesOf = (o: KubeObject | undefined) => (o!["spec"] as { images: Record<string, unknown> }).images

describe("informer", () => {
  it.effect("holds objects from a live server with unchanged parts shared between versions and equal values once", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.nodeImage, nodeImage("n1"))
      yield* api.create(resources.nodeImage, nodeImage("n2"))
      const informer = yield* makeInformer(resources.nodeImage, {}, () => Effect.void)
      yield* informer.synced
      const before = informer.get("n1")
      expect(imagesOf(informer.get("n2"))["nginx"]).toBe(imagesOf(before)["nginx"])
      expect(Object.isFrozen(before)).toBe(true)

      yield* api.patch(resources.nodeImage, { name: "n1" }, { status: { desired: 1 } }, "status")
      const statusWritten = Effect.suspend(() => (informer.get("n1")?.["status"] === undefined ? Effect.fail("not yet") : Effect.void))
      yield* Effect.eventually(Effect.andThen(Effect.yieldNow, statusWritten))
      const after = informer.get("n1")
      expect(after).not.toBe(before)
      expect(after?.["spec"]).toBe(before?.["spec"])
      expect(after?.["status"]).toEqual({ desired: 1 })
    }).pipe(Effect.scoped, Effect.provide(asOverTheWire))
  )
})
