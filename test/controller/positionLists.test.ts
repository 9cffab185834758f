import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { PositionLists } from "../../src/controller/imagePullJob/positionLists.ts"

/** What the lists stand for: a Set per key (insertion order), a position in one at a time, empty ones gone. */
class Model {
  readonly sets = new Map<string, Set<number>>()

  add(key: string, position: number): void {
    for (const [other, set] of this.sets) if (other !== key && set.has(position)) this.remove(other, position)
    let set = this.sets.get(key)
    if (set === undefined) this.sets.set(key, (set = new Set()))
    set.add(position)
  }

  remove(key: string, position: number): boolean {
    const set = this.sets.get(key)
    if (set === undefined || !set.delete(position)) return false
    if (set.size === 0) this.sets.delete(key)
    return true
  }
}

const operation = fc.record({ add: fc.boolean(), key: fc.constantFrom("a", "b", "c"), position: fc.nat({ max: 9 }) })

describe("PositionLists", () => {
  it("keeps each key's positions in the order they came, as a Set per key would", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        const lists = new PositionLists<string>(10)
        const model = new Model()
        for (const { add, key, position } of operations) {
          if (add) {
            lists.add(key, position)
            model.add(key, position)
          } else expect(lists.remove(key, position)).toBe(model.remove(key, position))
        }
        expect([...lists.keys()]).toEqual([...model.sets.keys()])
        for (const [key, set] of model.sets) {
          expect([...lists.positions(key)]).toEqual([...set])
          expect(lists.size(key)).toBe(set.size)
        }
        expect(lists.size("none")).toBe(0)
        expect([...lists.positions("none")]).toEqual([])
      })
    )
  })

  it("refuses a position outside its targets", () => {
    const lists = new PositionLists<string>(2)
    expect(() => lists.add("a", 2)).toThrow(RangeError)
    expect(() => lists.remove("a", -1)).toThrow(RangeError)
  })
})
