import { describe, expect, it } from "vitest"
import { EncodedJson } from "../../../harness/apiserver/http/encodedJson.ts"
import { intern } from "../../../harness/apiserver/storage/frozenJson.ts"

describe("the JSON text of the versions a server sends", () => {
  it("is JSON.stringify's, made once for a stored (frozen) version and anew for anything else", () => {
    const json = new EncodedJson()
    let made = 0
    const version = Object.freeze({ toJSON: () => ({ n: ++made }) })
    expect(json.of(version)).toBe('{"n":1}')
    expect(json.of(version)).toBe('{"n":1}')
    expect(made).toBe(1)
    const loose: Record<string, unknown> = { a: 1 }
    expect(json.of(loose)).toBe('{"a":1}')
    loose["a"] = 2
    expect(json.of(loose)).toBe('{"a":2}')
    const stored = intern({ metadata: { name: "n1" }, spec: { images: { "a/b": { tags: [{ tag: "é" }] } } } }, undefined)
    expect(json.of(stored)).toBe(JSON.stringify(stored))
    for (const value of ["s", 1, null, true, [1, { b: "c" }]]) expect(json.of(value)).toBe(JSON.stringify(value))
  })

  it("keeps the texts of the versions it encoded last only", () => {
    const json = new EncodedJson(2)
    const made = [0, 0, 0]
    const versions = made.map((_, i) => Object.freeze({ toJSON: () => ({ v: i, n: ++made[i]! }) }))
    for (const version of versions) json.of(version)
    expect(json.of(versions[2])).toBe('{"v":2,"n":1}')
    expect(json.of(versions[1])).toBe('{"v":1,"n":1}')
    // The oldest went when the third came: encoded again.
    expect(json.of(versions[0])).toBe('{"v":0,"n":2}')
    expect(made).toEqual([2, 1, 1])
  })

  it("keeps no more text than its budget of characters, oldest dropped first", () => {
    const json = new EncodedJson(1024, 110)
    const made = Array.from({ length: 10 }, () => 0)
    const versions = made.map((_, i) => Object.freeze({ toJSON: () => ({ v: i, n: ++made[i]!, pad: "x".repeat(30) }) }))
    for (const version of versions) json.of(version)
    expect(json.held.chars).toBeLessThanOrEqual(110)
    // The last two (52 characters each) fit in the budget and are held; the first was dropped and is encoded again.
    json.of(versions[9])
    json.of(versions[8])
    json.of(versions[0])
    expect(made[9]).toBe(1)
    expect(made[8]).toBe(1)
    expect(made[0]).toBe(2)
    // A text larger than the whole budget is not held at all.
    json.of(Object.freeze({ big: "y".repeat(200) }))
    expect(json.held.chars).toBeLessThanOrEqual(110)
  })
})
