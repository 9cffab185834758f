import { describe, expect, it } from "vitest"
import { humanDuration } from "../../src/api/humanDuration.ts"

const s = 1000
const m = 60 * s
const h = 60 * m
const d = 24 * h

describe("humanDuration, as apimachinery's", () => {
  it.each([
    [-5 * s, "<invalid>"],
    [-1 * s, "0s"],
    [45 * s, "45s"],
    [119 * s, "119s"],
    [3 * m + 12 * s, "3m12s"],
    [5 * m, "5m"],
    [14 * m, "14m"],
    [5 * h + 4 * m, "5h4m"],
    [20 * h, "20h"],
    [3 * d + 2 * h, "3d2h"],
    [40 * d, "40d"],
    [(2 * 365 + 31) * d, "2y31d"],
    [9 * 365 * d, "9y"]
  ])("%d ms is %s", (millis, text) => {
    expect(humanDuration(millis)).toBe(text)
  })
})
