import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { mergePatchBetween } from "../../src/kube/mergePatch.ts"

/** RFC 7386 application, to check a computed patch does what it says. */
const apply = (target: unknown, patch: unknown): unknown => {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch
  const out: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = apply(out[k], v)
  }
  return out
}

describe("mergePatchBetween", () => {
  it("names only what changed, with null for removed keys", () => {
    expect(mergePatchBetween({ a: 1, b: { c: 2, d: 3 }, e: [1] }, { a: 1, b: { c: 2 }, e: [1, 2], f: "x" })).toEqual({
      b: { d: null },
      e: [1, 2],
      f: "x"
    })
    expect(mergePatchBetween({ a: { b: 1 } }, { a: { b: 1 } })).toBeUndefined()
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
        expect(patch === undefined ? before : apply(before, patch)).toEqual(apply({}, after))
      })
    )
  })
})
