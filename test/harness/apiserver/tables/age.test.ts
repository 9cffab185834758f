import { describe, expect, it } from "vitest"
import { ageOf } from "../../../../harness/apiserver/tables/age.ts"

describe("ageOf, a table cell's AGE", () => {
  it("ages a timestamp", () => {
    expect(ageOf("2030-01-01T00:00:00Z", Date.parse("2030-01-01T00:01:30Z"))).toBe("90s")
    expect(ageOf(undefined, 0)).toBe("<unknown>")
  })
})
