import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { EventHistory, versionBytes } from "../../../../harness/apiserver/storage/watchHistory.ts"
import type { HistoryEvent } from "../../../../harness/apiserver/storage/watchHistory.ts"
import { intern } from "../../../../harness/apiserver/storage/frozenJson.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../../src/kube/KubeApi.ts"
import { resources } from "../../../../src/kube/resources.ts"

/** A NodeImage spec of `n` images, image `changed` at version `v`. */
const manyImages = (n: number, changed: number, v: number) =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`registry.example.com/app-${i}`, { tags: [{ tag: "v1", version: i === changed ? v : 0 }] }])
  )

describe("the watch history", () => {
  it("weighs a version by what it does not share with the one before", () => {
    const first = intern({ metadata: { name: "n" }, spec: { images: manyImages(500, 0, 0) } }, undefined)
    assert.isAbove(versionBytes(first, undefined), 500 * 50)
    assert.strictEqual(versionBytes(first, first), 0)
    const next = intern({ metadata: { name: "n" }, spec: { images: manyImages(500, 7, 1) } }, first)
    const bytes = versionBytes(next, first)
    // The 500-entry image record is new, one image entry in it; nothing else.
    assert.isAbove(bytes, 16 + 8 * 500)
    assert.isBelow(bytes, 16 + 8 * 500 + 400)
    // One image more: a record with a key set of its own, hence a hidden class of its own.
    const grown = intern(
      { metadata: { name: "n" }, spec: { images: { ...manyImages(500, 7, 1), "registry.example.com/new": { tags: [] } } } },
      next
    )
    assert.isAbove(versionBytes(grown, next), 88 * 501)
  })

  it("holds no more than its bytes, the newest kept", () => {
    const evicted: Array<number> = []
    const history = new EventHistory({ count: 10_000, bytes: 20_000 }, (event) => evicted.push(event.rv))
    let previous: KubeObject | undefined
    for (let rv = 1; rv <= 100; rv++) {
      const object = intern({ metadata: { name: "n" }, spec: { images: manyImages(200, rv % 200, rv) } }, previous) as KubeObject
      const event: HistoryEvent = { rv, key: "n", type: rv === 1 ? "ADDED" : "MODIFIED", object, previous }
      history.push(event)
      previous = object
    }
    assert.isAtMost(history.held.bytes, 20_000)
    assert.isAtLeast(history.held.count, 5)
    assert.strictEqual(history.since(0, "n").at(-1)?.rv, 100)
    assert.strictEqual(history.trimmedUpTo, evicted.at(-1))
  })

  it.effect("of large objects ends a watch that fell behind its bytes with Gone, well before its count", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const start = yield* api.list(resources.nodeImage)
      const pull = yield* Stream.toPull(api.watch(resources.nodeImage, { resourceVersion: start.resourceVersion }))
      const nodeImage: KubeObject = { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: "node-1" }, spec: {} }
      yield* api.create(resources.nodeImage, nodeImage)
      // Each version's new 256-entry image record (a NodeImage's most) weighs over 2 KB: 40 of them are more than 64 KB.
      for (let v = 1; v <= 40; v++) yield* api.patch(resources.nodeImage, { name: "node-1" }, { spec: { images: manyImages(256, v, v) } })
      const error = yield* Effect.flip(pull)
      assert.strictEqual((error as { _tag?: string })._tag, "Gone")
    }).pipe(Effect.provide(InMemoryKubeApi.layerWith({ historyLimit: 1000, historyLimitBytes: 64 * 1024 })))
  )
})
