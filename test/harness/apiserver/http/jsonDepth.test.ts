import { describe, expect, it } from "vitest"
import { exceedsJsonDepth } from "../../../../harness/apiserver/http/jsonDepth.ts"

describe("exceedsJsonDepth", () => {
  it("counts nested arrays and objects against the limit", () => {
    expect(exceedsJsonDepth(`{"a":[{"b":[]}]}`, 4)).toBe(false)
    expect(exceedsJsonDepth(`{"a":[{"b":[[]]}]}`, 4)).toBe(true)
    expect(exceedsJsonDepth(`[[],[],[],[]]`, 2)).toBe(false)
  })

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(exceedsJsonDepth(`{"a":"[[[[{{{{"}`, 1)).toBe(false)
    expect(exceedsJsonDepth(`{"a":"\\"[[[["}`, 1)).toBe(false)
    expect(exceedsJsonDepth(`{"a":"\\\\","b":[[]]}`, 2)).toBe(true)
  })

  it("uses Go's limit of 10000 by default", () => {
    expect(exceedsJsonDepth("[".repeat(10_000) + "]".repeat(10_000))).toBe(false)
    expect(exceedsJsonDepth("[".repeat(10_001) + "]".repeat(10_001))).toBe(true)
  })
})
