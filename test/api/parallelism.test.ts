import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isValidParallelism, resolveParallelism } from "../../src/api/parallelism.ts"

describe("parallelism", () => {
  it.each<[number | string, number, number]>([
    [1, 100, 1],
    [10, 3, 10],
    [0, 100, 0],
    ["0%", 100, 0],
    ["50%", 10, 5],
    ["25%", 10, 3],
    ["1%", 3, 1],
    ["100%", 7, 7],
    ["50%", 0, 0],
    // A numeric string is that number, as upstream's int-or-string (Helm's `quote` writes "4").
    ["4", 10, 4],
    ["0", 10, 0],
    ["5", 3, 5]
  ])("%j of %i nodes is %i", (parallelism, nodes, expected) => {
    expect(resolveParallelism(parallelism, nodes)).toBe(expected)
  })

  it.each(["-1%", "101%", "-4", "4.5", "1234567890", "", "%", "1.5%", "05%", " 5%"])("%j is invalid and resolves to 0", (p) => {
    expect(isValidParallelism(p)).toBe(false)
    expect(resolveParallelism(p, 10)).toBe(0)
  })

  it("a non-zero percentage of some nodes is never 0, and never more than the nodes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100_000 }), (pct, nodes) => {
        const n = resolveParallelism(`${pct}%`, nodes)
        expect(n).toBeGreaterThanOrEqual(1)
        expect(n).toBeLessThanOrEqual(nodes)
      })
    )
  })
})
