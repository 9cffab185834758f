import { describe, expect, it } from "vitest"
import { parseGoDuration } from "../../src/api/goDuration.ts"

// Cases as Go's time.ParseDuration takes and refuses them.
describe("a Go duration", () => {
  it.each([
    ["0", 0],
    ["+0", 0],
    ["5s", 5_000],
    ["-5s", -5_000],
    ["+5s", 5_000],
    ["5.s", 5_000],
    [".5s", 500],
    ["1.004s", 1_004],
    ["10ns", 1e-5],
    ["11us", 0.011],
    ["12µs", 0.012],
    ["13ms", 13],
    ["15m", 900_000],
    ["16h", 57_600_000],
    ["3h30m", 12_600_000],
    ["10.5s4m", 250_500],
    ["-2m3.4s", -123_400],
    ["1h2m3s4ms", 3_723_004]
  ])("%s is %d ms", (text, millis) => {
    expect(parseGoDuration(text)).toBeCloseTo(millis, 9)
  })

  it.each(["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "5s ", " 5s", "1m-2s", "0x"])("%j is refused", (text) => {
    expect(parseGoDuration(text)).toBeUndefined()
  })
})
