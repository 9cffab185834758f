import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { applyMergePatch, mergePatchBetween } from "../../src/json/mergePatch.ts"

describe("mergePatchBetween", () => {
  it("names only what changed, with null for removed keys", () => {
    expect(mergePatchBetween({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 2 }, e: [1, 2], f: "x" })).toEqual({
      b: { d: null },
      e: [1, 2],
      f: "x"
    })
    expect(mergePatchBetween({ a: { b: 1 } }, { a: { b: 1 } })).toBeUndefined()
  })

  it("sees no change in an array whose objects only list their keys in another order", () => {
    // A real API server returns a custom resource's maps with their keys sorted; the daemon's own
    // tag statuses list them in its order. The same status is no change to write.
    const stored = { imageStatuses: { nginx: { tags: [{ phase: "Succeeded", tag: "1.25", version: 1 }] } } }
    const wanted = { imageStatuses: { nginx: { tags: [{ tag: "1.25", version: 1, phase: "Succeeded" }] } } }
    expect(mergePatchBetween(stored, wanted)).toBeUndefined()
    expect(mergePatchBetween({ e: [{ a: 1, b: undefined }] }, { e: [{ a: 1 }] })).toBeUndefined()
    expect(mergePatchBetween({ e: [{ a: 1 }] }, { e: [{ a: 1, b: 2 }] })).toEqual({ e: [{ a: 1, b: 2 }] })
    expect(mergePatchBetween({ e: [{ a: 1, b: 2 }] }, { e: [{ a: 1 }] })).toEqual({ e: [{ a: 1 }] })
    expect(mergePatchBetween({ e: [[1, 2]] }, { e: [[1, 2], []] })).toEqual({ e: [[1, 2], []] })
    expect(mergePatchBetween({ e: [{ a: [1] }] }, { e: [{ a: { 0: 1 } }] })).toEqual({ e: [{ a: { 0: 1 } }] })
  })

  it("applied to before, gives after (for null-free JSON objects)", () => {
    const json = fc.jsonValue().filter((v) => !JSON.stringify(v).includes("null"))
    const object = fc.dictionary(
      fc.string().filter((k) => k !== "__proto__"),
      json
    )
    fc.assert(
      fc.property(object, object, (before, after) => {
        const patch = mergePatchBetween(before, after)
        expect(patch === undefined ? before : applyMergePatch(before, patch)).toEqual(applyMergePatch({}, after))
      })
    )
  })
})

describe("applyMergePatch", () => {
  // RFC 7386's appendix A, case by case.
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"]
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
  ])("%j patched with %j is %j", (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result)
  })

  it("keeps a key named __proto__ as data", () => {
    const patched = applyMergePatch({}, JSON.parse('{"__proto__":{"polluted":true}}')) as Record<string, unknown>
    expect(Object.hasOwn(patched, "__proto__")).toBe(true)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("leaves the target as it was", () => {
    const target = { a: { b: 1 } }
    applyMergePatch(target, { a: { b: 2 } })
    expect(target).toEqual({ a: { b: 1 } })
  })
})
