import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { millisOf, rfc3339 } from "../../src/api/time.ts"

describe("rfc3339", () => {
  it("is the instant to the second, in UTC, as Kubernetes writes a metav1.Time", () => {
    expect(rfc3339(Date.UTC(2026, 11, 5, 3, 4, 5, 678))).toBe("2026-12-05T03:04:05Z")
    expect(rfc3339(0)).toBe("1970-01-01T00:00:00Z")
    // Years past 9999 have six digits and a sign in an ISO string; the cut is still the milliseconds'.
    expect(rfc3339(Date.UTC(10000, 0, 1, 0, 0, 0, 1))).toBe("+010000-01-01T00:00:00Z")
  })

  it("reads back as the instant without its milliseconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (millis) => {
        expect(millisOf(rfc3339(millis))).toBe(millis - (millis % 1000))
      })
    )
  })
})
