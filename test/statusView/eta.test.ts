import { describe, expect, it } from "vitest"
import { estimateRemaining } from "../../src/statusView/eta.ts"

const start = 1_000_000

describe("estimateRemaining", () => {
  it("extrapolates the average rate since the start: 4 of 10 in 40 s leaves 60 s", () => {
    expect(estimateRemaining({ desired: 10, finished: 4, startTime: start, now: start + 40_000 })).toBe(60_000)
  })

  it("rounds up to the next millisecond rather than promising too soon", () => {
    expect(estimateRemaining({ desired: 3, finished: 1, startTime: start, now: start + 1_000 / 3 })).toBe(667)
  })

  it("is 0 once everything finished, even with nothing to time it by", () => {
    expect(estimateRemaining({ desired: 5, finished: 5, startTime: undefined, now: start })).toBe(0)
    expect(estimateRemaining({ desired: 0, finished: 0, startTime: start, now: start })).toBe(0)
  })

  it("has no estimate before the first node finishes, without a start time, or with no time passed", () => {
    expect(estimateRemaining({ desired: 5, finished: 0, startTime: start, now: start + 10_000 })).toBeUndefined()
    expect(estimateRemaining({ desired: 5, finished: 2, startTime: undefined, now: start })).toBeUndefined()
    expect(estimateRemaining({ desired: 5, finished: 2, startTime: start, now: start })).toBeUndefined()
    expect(estimateRemaining({ desired: 5, finished: 2, startTime: start + 5_000, now: start })).toBeUndefined()
  })
})
