import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { NodeNumbers, NodeSet } from "../../src/controller/nodeSet.ts"
import { OwnerIndex } from "../../src/controller/ownerIndex.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import type { Stored } from "../../src/kube/store.ts"
import { makeNodeImage } from "../support/fixtures.ts"

const owned = (uid: string) => ({
  tags: [{ tag: "1", version: 0, ownerReferences: [{ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: uid, uid }] }]
})
const stored = (view: NodeImage): Stored<NodeImage> => ({ raw: view as never, view })
const sorted = <A>(xs: Iterable<A>) => [...xs].sort()

describe("NodeSet", () => {
  it("holds what a Set of the same numbers holds", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(300))), (ops) => {
        const bits = new NodeSet()
        const model = new Set<number>()
        for (const [add, n] of ops) {
          if (add) {
            bits.add(n)
            model.add(n)
          } else {
            bits.delete(n)
            model.delete(n)
          }
        }
        expect(bits.size).toBe(model.size)
        expect([...bits]).toEqual([...model].sort((a, b) => a - b))
        for (let n = 0; n <= 300; n++) expect(bits.has(n)).toBe(model.has(n))
      })
    )
  })
})

describe("NodeNumbers", () => {
  it("numbers names densely and reuses the number of a forgotten one", () => {
    const numbers = new NodeNumbers()
    expect([numbers.numberOf("a"), numbers.numberOf("b"), numbers.numberOf("a")]).toEqual([0, 1, 0])
    numbers.forget("a")
    expect(numbers.numberOf("c")).toBe(0)
    expect(numbers.nameOf(0)).toBe("c")
    expect(numbers.nameOf(1)).toBe("b")
  })
})

describe("OwnerIndex", () => {
  it("follows tags as they are written, moved to another image and removed, and NodeImages deleted", () => {
    const index = new OwnerIndex()
    const n1 = makeNodeImage("n1", { images: { nginx: owned("u1"), redis: owned("u2") } })
    const n2 = makeNodeImage("n2", { images: { nginx: owned("u1") } })
    index.update("n1", undefined, stored(n1))
    index.update("n2", undefined, stored(n2))
    expect(sorted(index.nodesOf("u1"))).toEqual(["n1", "n2"])
    expect(sorted(index.imagesOf("u2"))).toEqual([["n1", "redis"]])

    // An edit moves u1 on n2 to another image; for a while it owns both on n1.
    const n2moved = makeNodeImage("n2", { images: { "nginx-next": owned("u1") } })
    index.update("n2", stored(n2), stored(n2moved))
    const n1both = makeNodeImage("n1", { images: { nginx: owned("u1"), "nginx-next": owned("u1"), redis: owned("u2") } })
    index.update("n1", stored(n1), stored(n1both))
    expect(sorted([...index.imagesOf("u1")].map(([node, image]) => `${node}/${image}`))).toEqual([
      "n1/nginx",
      "n1/nginx-next",
      "n2/nginx-next"
    ])
    expect(sorted(index.nodesOf("u1"))).toEqual(["n1", "n2"])

    // n1 goes away; a new node reusing its number starts empty.
    index.update("n1", stored(n1both), undefined)
    expect(sorted(index.nodesOf("u1"))).toEqual(["n2"])
    expect([...index.nodesOf("u2")]).toEqual([])
    index.update("n3", undefined, stored(makeNodeImage("n3", { images: { redis: owned("u3") } })))
    expect([...index.nodesOf("u3")]).toEqual(["n3"])
    expect(sorted(index.nodesOf("u1"))).toEqual(["n2"])
  })
})
