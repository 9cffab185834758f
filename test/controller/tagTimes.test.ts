import { describe, expect, it } from "vitest"
import { rememberedTimes } from "../../src/controller/nodeImage/tagTimes.ts"

describe("rememberedTimes", () => {
  it("reads times as Date.parse does, the same time again from its memo", () => {
    const parse = rememberedTimes()
    expect(parse("2026-12-02T10:00:00Z")).toBe(Date.parse("2026-12-02T10:00:00Z"))
    expect(parse("2026-12-02T10:00:00Z")).toBe(Date.parse("2026-12-02T10:00:00Z"))
    expect(parse("not a time")).toBeNaN()
  })

  it("keeps each memo to its owner and within its limit", () => {
    const a = rememberedTimes(2)
    const b = rememberedTimes(2)
    const times = ["2026-12-02T10:00:00Z", "2026-12-02T10:00:01Z", "2026-12-02T10:00:02Z", "2026-12-02T10:00:00Z"]
    expect(times.map(a)).toEqual(times.map((t) => Date.parse(t)))
    expect(b(times[2]!)).toBe(Date.parse(times[2]!))
  })
})
