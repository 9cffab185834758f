/**
 * intern: a new version as deeply frozen JSON sharing every unchanged part of the previous one,
 * the previous one itself when nothing changed, and NotJson (with where) for what JSON cannot hold.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { intern, NotJson } from "../../../../harness/apiserver/storage/frozenJson.ts"

const version = (phase: string, extra: object = {}) => ({
  metadata: { name: "n1", resourceVersion: "7", labels: { "kubernetes.io/hostname": "n1" } },
  spec: { images: { nginx: { tags: [{ tag: "1.25", version: 1 }] }, redis: { tags: [{ tag: "7", version: 2 }] } } },
  status: { imageStatuses: { nginx: { tags: [{ tag: "1.25", phase: "Succeeded" }] }, redis: { tags: [{ tag: "7", phase }] } } },
  ...extra
})

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== "object" || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen))

const notJsonOf = (value: unknown, previous?: unknown): NotJson => {
  try {
    intern(value, previous)
  } catch (error) {
    if (error instanceof NotJson) return error
    throw error
  }
  throw new Error("interned")
}

describe("intern", () => {
  it("gives the previous version itself when nothing changed, whatever the key order", () => {
    const previous = intern(version("Pulling"), undefined) as any
    expect(intern(version("Pulling"), previous)).toBe(previous)
    const { status, spec, metadata } = version("Pulling")
    expect(intern({ status, metadata, spec }, previous)).toBe(previous)
  })

  it("shares every part the new version did not change, and freezes what it made", () => {
    const previous = intern(version("Pulling"), undefined) as any
    const next = intern(version("Succeeded"), previous) as any
    expect(next).not.toBe(previous)
    expect(next).toEqual(version("Succeeded"))
    expect(isDeepFrozen(next)).toBe(true)
    expect(next.metadata).toBe(previous.metadata)
    expect(next.spec).toBe(previous.spec)
    expect(next.status.imageStatuses.nginx).toBe(previous.status.imageStatuses.nginx)
    expect(next.status.imageStatuses.redis).not.toBe(previous.status.imageStatuses.redis)
  })

  it("drops undefined members as JSON.stringify does, and sees a member gone or added", () => {
    const previous = intern({ a: 1, b: { c: 2 } }, undefined) as any
    expect(intern({ a: 1, b: previous.b, d: undefined }, previous)).toBe(previous)
    const fewer = intern({ a: 1 }, previous)
    expect(fewer).toEqual({ a: 1 })
    expect(Object.keys(fewer as object)).toEqual(["a"])
    const more = intern({ a: 1, b: { c: 2 }, e: null }, previous) as any
    expect(more).toEqual({ a: 1, b: { c: 2 }, e: null })
    expect(more.b).toBe(previous.b)
    // A member that becomes undefined after equal ones: those stay previous's, the gone one goes.
    const gone = intern({ a: 1, b: undefined }, previous) as any
    expect(gone).toEqual({ a: 1 })
    expect(Object.keys(gone)).toEqual(["a"])
  })

  it("honours toJSON and keeps a '__proto__' key as data", () => {
    expect(intern({ at: new Date(0) }, undefined)).toEqual({ at: "1970-01-01T00:00:00.000Z" })
    const parsed = JSON.parse('{"__proto__": {"x": 1}}')
    const interned = intern(parsed, undefined) as any
    expect(Object.hasOwn(interned, "__proto__")).toBe(true)
    expect(Object.getPrototypeOf(interned)).toBe(Object.prototype)
  })

  it("says where a value is not JSON", () => {
    expect(notJsonOf({ spec: { items: [{ n: Number.NaN }] } })).toMatchObject({
      path: "spec.items[0].n",
      reason: "NaN is not a JSON number"
    })
    expect(notJsonOf([[1, Number.POSITIVE_INFINITY]])).toMatchObject({ path: "[0][1]" })
    expect(notJsonOf({ a: [{ b: () => 1 }] })).toMatchObject({ path: "a[0].b", reason: "a function is not JSON" })
    expect(notJsonOf({ m: new Map() })).toMatchObject({ path: "m", reason: "a Map is not JSON" })
    // Also where the same place held JSON before.
    const previous = intern({ a: { b: 1 } }, undefined)
    expect(notJsonOf({ a: { b: 1n } }, previous)).toMatchObject({ path: "a.b", reason: "a bigint is not JSON" })
  })

  it("equals JSON's own round trip, and shares with the previous version exactly where that is equal", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (before, after) => {
        const previous = intern(before, undefined)
        const next = intern(after, previous)
        // Through JSON both, since intern keeps a -0 that JSON spells 0.
        expect(JSON.parse(JSON.stringify(next))).toEqual(JSON.parse(JSON.stringify(after)))
        expect(isDeepFrozen(next)).toBe(true)
        const equal = JSON.stringify(JSON.parse(JSON.stringify(after))) === JSON.stringify(previous)
        if (equal && typeof next === "object" && next !== null) expect(next).toBe(previous)
      })
    )
  })
})
