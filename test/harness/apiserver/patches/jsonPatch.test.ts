import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { applyJsonPatch } from "../../../../harness/apiserver/patches/jsonPatch.ts"

const apply = (doc: unknown, patch: unknown) => applyJsonPatch(doc, patch)
const value = (doc: unknown, patch: unknown) => Result.getOrThrow(apply(doc, patch))
const error = (doc: unknown, patch: unknown) => {
  const result = apply(doc, patch)
  return Result.isFailure(result) ? { message: result.failure.message, malformed: result.failure.malformed } : undefined
}

describe("JSON patch (RFC 6902)", () => {
  const doc = Object.freeze({ a: Object.freeze([1, 2, 3]), b: Object.freeze({ c: "x" }) })

  it("add, remove, replace, move, copy, test; the document itself is never changed", () => {
    expect(
      value(doc, [
        { op: "add", path: "/a/1", value: 9 },
        { op: "add", path: "/a/-", value: 4 },
        { op: "remove", path: "/a/0" },
        { op: "replace", path: "/b/c", value: "y" },
        { op: "copy", from: "/b/c", path: "/d" },
        { op: "move", from: "/d", path: "/b/e" },
        { op: "test", path: "/b", value: { c: "y", e: "y" } }
      ])
    ).toEqual({ a: [9, 2, 3, 4], b: { c: "y", e: "y" } })
    expect(doc).toEqual({ a: [1, 2, 3], b: { c: "x" } })
    expect(value(doc, [{ op: "add", path: "/b/x~1y~0z", value: 1 }])).toMatchObject({ b: { "x/y~z": 1 } })
    expect(value(doc, [{ op: "replace", path: "", value: { whole: true } }])).toEqual({ whole: true })
  })

  it("fails with json-patch's messages: a failed test or a missing path is a failed patch", () => {
    expect(error(doc, [{ op: "test", path: "/b/c", value: "no" }])).toEqual({
      message: "testing value /b/c failed: test failed",
      malformed: false
    })
    expect(error(doc, [{ op: "test", path: "/nope", value: 1 }])).toEqual({
      message: "unable to test missing value: /nope",
      malformed: false
    })
    expect(error(doc, [{ op: "remove", path: "/b/zz" }])?.message).toBe(`remove operation does not apply: doc is missing path: "/b/zz"`)
    expect(error(doc, [{ op: "add", path: "/x/y", value: 1 }])?.message).toBe(`add operation does not apply: doc is missing path: "/x/y"`)
    expect(error(doc, [{ op: "replace", path: "/a/7", value: 1 }])?.message).toBe("Unable to access invalid index: 7")
  })

  it("a patch that is not a list of operations is malformed", () => {
    expect(error(doc, { op: "add" })?.malformed).toBe(true)
    expect(error(doc, [{ op: "frobnicate", path: "/a" }])).toEqual({ message: "Unexpected kind: frobnicate", malformed: true })
    expect(error(doc, [{ op: "add", path: "/a/0" }])?.malformed).toBe(true)
  })

  it("checks in json-patch's order: the pointer, then the value, then the path", () => {
    expect(error(doc, [{ op: "add", path: "a", value: 1 }])).toEqual({ message: `invalid JSON pointer: "a"`, malformed: false })
    expect(error(doc, [{ op: "add", path: "/x/y" }])).toEqual({ message: "missing value for add operation", malformed: true })
    expect(error(doc, [{ op: "test", path: "/nope" }])?.message).toBe("unable to test missing value: /nope")
    expect(error(doc, [{ op: "test", path: "/a/x", value: 1 }])?.message).toBe("Unable to access invalid index: x")
    expect(error(doc, [{ op: "move", path: "/d" }])).toEqual({ message: "missing from field for move operation", malformed: true })
    expect(error(doc, [{ op: "copy", from: "/q", path: "/d" }])?.message).toBe(
      `copy operation does not apply: doc is missing from path: "/q"`
    )
    expect(error(doc, [{ op: "add", path: "/a/4", value: 1 }])?.message).toBe("Unable to access invalid index: 4")
  })

  it("reads every operation before applying any: a malformed one fails the patch first", () => {
    expect(error(doc, [{ op: "test", path: "/b/c", value: "no" }, { op: "add" }])).toEqual({
      message: "operation missing path field",
      malformed: true
    })
  })
})
