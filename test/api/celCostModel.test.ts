// The cost model of test/support/celCost.ts on the constructs the selector and NodeImage rules use,
// against figures worked out by hand as cel-go's and kube-apiserver's estimators count.
import { describe, expect, it } from "vitest"
import { estimateCost } from "../support/celCost.ts"

const labels = { type: "object", maxProperties: 10, additionalProperties: { type: "string", maxLength: 10 } }
const words = { type: "array", maxItems: 10, items: { type: "string", maxLength: 10 } }

describe("CEL cost model", () => {
  it("a map's keys cost nothing to traverse, as kube-apiserver sizes them; its values their maxLength", () => {
    // self (1) + the macro (1) + 10 × (k (1) + matches over 0 bytes: ceil(0.1) × ceil(4 × 0.25) = 1, + the step 1).
    expect(estimateCost("self.all(k, k.matches('abcd'))", labels)).toBe(1 + 1 + 10 * (1 + 1 + 1))
    // A value is 40 bytes: self[k] (3) + matches ceil(4.1) × 1 = 5.
    expect(estimateCost("self.all(k, self[k].matches('abcd'))", labels)).toBe(1 + 1 + 10 * (3 + 5 + 1))
  })

  it("an entry of a list literal keeps its size, so binding through [x].map costs what x does", () => {
    // The literal: 10 + self[0] (2); the map over its one entry: 1 + (w (1) + matches 5 + the step 1).
    expect(estimateCost("[self[0]].map(w, w.matches('abcd'))", words)).toBe(10 + 2 + 1 + (1 + 5 + 1))
  })

  it("indexing a map macro's result counts the macro once", () => {
    const mapped = estimateCost("self.map(w, w.matches('abcd'))", words)
    expect(mapped).toBe(1 + 1 + 10 * (1 + 5 + 1))
    expect(estimateCost("self.map(w, w.matches('abcd'))[0]", words)).toBe(mapped + 1)
  })

  it("split traverses twice; join's result is its separators", () => {
    // self[0] (2); split: 40 bytes × 0.2 = 8; join of up to 40 entries with ", ": 2 × 39 bytes × 0.1 = ceil(7.8).
    expect(estimateCost("self[0].split(',').join(', ')", words)).toBe(2 + 8 + 8)
  })
})
