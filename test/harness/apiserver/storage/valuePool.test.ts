import { Effect } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { intern } from "../../../../harness/apiserver/storage/frozenJson.ts"
import { maxPooledEntries, ValuePool } from "../../../../harness/apiserver/storage/valuePool.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import { resources } from "../../../../src/kube/resources.ts"

const owner = (uid: string) => ({ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job", uid })
const frozen = <A extends object>(a: A): A => Object.freeze(a)

describe("ValuePool", () => {
  it("hands out the first of equal values and keeps different ones apart", () => {
    const pool = new ValuePool()
    const first = pool.share(frozen(owner("u1")))
    expect(pool.share(frozen(owner("u1")))).toBe(first)
    expect(pool.share(frozen(owner("u2")))).not.toBe(first)
    // Same members in another order is another value: key order is kept as written.
    expect(pool.share(frozen({ uid: "u1", apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job" }))).not.toBe(first)
    // Numbers, strings and booleans that print alike are different values.
    expect(pool.share(frozen({ a: 1 }))).not.toBe(pool.share(frozen({ a: "1" })))
    expect(pool.share(frozen({ a: true }))).not.toBe(pool.share(frozen({ a: "t" })))
  })

  it("pools a value only when all its members are pooled and were met more than once", () => {
    const pool = new ValuePool()
    const inner = pool.share(frozen(owner("u1")))
    // Its member is new: so is it (no pooled value can hold a member met once), and it is not pooled.
    const first = frozen([inner])
    expect(pool.share(first)).toBe(first)
    expect(pool.has(first)).toBe(false)
    // The member met again: a value holding it is pooled now, and shared from then on.
    const outer = pool.share(frozen([pool.share(frozen(owner("u1")))]))
    expect(outer).not.toBe(first)
    expect(pool.has(outer)).toBe(true)
    expect(pool.share(frozen([pool.share(frozen(owner("u1")))]))).toBe(outer)
    const loose = frozen([frozen(owner("u1"))])
    expect(pool.share(loose)).toBe(loose)
    expect(pool.has(loose)).toBe(false)
    const long = frozen({ message: "x".repeat(1000) })
    expect(pool.share(long)).toBe(long)
    expect(pool.share(frozen({ message: "x".repeat(1000) }))).not.toBe(long)
    const wide = frozen(Object.fromEntries(Array.from({ length: maxPooledEntries + 1 }, (_, i) => [`k${i}`, i])))
    expect(pool.has(pool.share(wide))).toBe(false)
  })

  it("knows what it settled, pooled or not", () => {
    const pool = new ValuePool()
    const wide = pool.settle(frozen(Object.fromEntries(Array.from({ length: maxPooledEntries + 1 }, (_, i) => [`k${i}`, i]))))
    expect(pool.has(wide)).toBe(false)
    expect(pool.settled(wide)).toBe(true)
    expect(pool.settled(pool.settle(frozen(owner("u1"))))).toBe(true)
    expect(pool.settled(frozen(owner("u1")))).toBe(false)
    expect(new ValuePool().settled(wide)).toBe(false)
  })

  it("lets go of values unused for two generations", () => {
    const pool = new ValuePool(2)
    const first = pool.share(frozen({ n: 0 }))
    for (let n = 1; n <= 4; n++) pool.share(frozen({ n }))
    expect(pool.share(frozen({ n: 0 }))).not.toBe(first)
    // A value in use is kept: meeting it again moves it to the young generation.
    const kept = pool.share(frozen({ n: 10 }))
    for (let n = 11; n <= 20; n++) {
      pool.share(frozen({ n }))
      expect(pool.share(frozen({ n: 10 }))).toBe(kept)
    }
  })
})

describe("the pool's bound in characters", () => {
  it("ends a generation at its characters of keys as well as its count", () => {
    const pool = new ValuePool(10_000, 1000)
    const first = pool.share(frozen({ n: 0 }))
    // Each of these keys is over 100 characters: a generation ends every 9 of them, long before 10,000.
    for (let n = 1; n <= 30; n++) pool.share(frozen({ n, pad: "x".repeat(100) }))
    expect(pool.share(frozen({ n: 0 }))).not.toBe(first)
    // A value in use is kept all the same.
    const kept = pool.share(frozen({ n: 10, pad: "y" }))
    for (let n = 31; n <= 80; n++) {
      pool.share(frozen({ n, pad: "x".repeat(100) }))
      expect(pool.share(frozen({ n: 10, pad: "y" }))).toBe(kept)
    }
  })
})

describe("stored JSON", () => {
  it("shares equal small values between unrelated writes once they repeat", () => {
    const write = (tag: string) => intern({ tags: [{ tag, ownerReferences: [owner("u1")] }] }, undefined) as any
    // Each level is pooled once its members have been met twice: the whole from the sixth write on.
    const writes = Array.from({ length: 6 }, () => write("v1"))
    expect(writes[1].tags[0].ownerReferences[0]).toBe(writes[0].tags[0].ownerReferences[0])
    expect(writes[2].tags[0].ownerReferences).toBe(writes[3].tags[0].ownerReferences)
    expect(writes[5]).toBe(writes[4])
    const other = write("v2")
    expect(other.tags[0].ownerReferences).toBe(writes[5].tags[0].ownerReferences)
    expect(Object.isFrozen(other.tags[0])).toBe(true)
  })

  it("does not pool an object holding a value met once, such as a version's own metadata", () => {
    const pool = new ValuePool()
    const metadata = pool.share(frozen({ name: "n1", resourceVersion: "17" }))
    const object = pool.share(frozen({ metadata, spec: pool.share(frozen({ a: 1 })) }))
    expect(pool.has(metadata)).toBe(true)
    expect(pool.has(object)).toBe(false)
  })

  it("keeps large records with sorted keys, equal in content, and returns the previous version when unchanged", () => {
    const names = Array.from({ length: 40 }, (_, i) => `image-${String(39 - i).padStart(2, "0")}`)
    const record = Object.fromEntries(names.map((n) => [n, { tags: [{ tag: "v1" }] }]))
    const stored = intern(record, undefined) as Record<string, unknown>
    expect(Object.keys(stored)).toEqual([...names].sort())
    expect(stored).toEqual(record)
    expect(intern({ ...record }, stored)).toBe(stored)
    const changed = intern({ ...record, "image-00": { tags: [{ tag: "v2" }] } }, stored) as Record<string, unknown>
    expect(changed).not.toBe(stored)
    expect(changed["image-01"]).toBe(stored["image-01"])
  })

  it("returns the stored subtrees a fresh copy equals, whatever its key order, and walks what differs", () => {
    const version = (phase: string) => ({
      metadata: { name: "n1", resourceVersion: phase },
      spec: { images: { nginx: { tags: [{ tag: "v1", ownerReferences: [owner("u1")] }] } } },
      status: { imageStatuses: { nginx: { tags: [{ tag: "v1", phase }] } } }
    })
    const stored = intern(version("Pulling"), undefined) as any
    const fresh = JSON.parse(JSON.stringify(version("Succeeded")))
    fresh.spec = { images: { nginx: { tags: [{ ownerReferences: [owner("u1")], tag: "v1" }] } } }
    const next = intern(fresh, stored) as any
    expect(next.spec).toBe(stored.spec)
    expect(next.status.imageStatuses.nginx.tags[0].phase).toBe("Succeeded")
    expect(next.metadata.name).toBe("n1")
    // A member that is undefined is dropped, as JSON.stringify does, not taken for equal.
    const withUndefined = intern({ ...version("Pulling"), extra: undefined }, stored)
    expect(withUndefined).toEqual(stored)
    expect(intern({ a: 1, b: undefined }, intern({ a: 1, b: 2 }, undefined))).toEqual({ a: 1 })
  })

  it.effect("gives NodeImages of different nodes the same tag objects when their tags are equal", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const tag = () => ({
        tag: "v1",
        version: 0,
        imagePullPolicy: "IfNotPresent",
        createdAt: "2026-12-02T10:00:00Z",
        ownerReferences: [owner("u1")]
      })
      const names = Array.from({ length: 8 }, (_, i) => `n${i + 1}`)
      for (const name of names) {
        yield* api.create(resources.nodeImage, {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "NodeImage",
          metadata: { name },
          spec: { images: { nginx: { tags: [tag()] } } }
        })
      }
      const images = (name: string) =>
        Effect.map(api.get(resources.nodeImage, { name }), (o) => (o["spec"] as { images: Record<string, unknown> }).images)
      // From the sixth on (see "shares equal small values..."), every node's is one object.
      const [n7, n8] = [yield* images("n7"), yield* images("n8")]
      expect(n8["nginx"]).toBe(n7["nginx"])
      expect(n7["nginx"]).toEqual({ tags: [tag()] })
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
