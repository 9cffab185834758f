/** The books of the NodeImage and pre-download reconcilers (nodeImage/state.ts, workload/state.ts). */
import { describe, expect, it } from "vitest"
import { makeNodeImageBooks } from "../../src/controller/nodeImage/state.ts"
import { makeWorkloadBooks } from "../../src/controller/workload/state.ts"

describe("the NodeImage books", () => {
  it("say an unreadable NodeImage once per message, and again after it was readable", () => {
    const books = makeNodeImageBooks()
    expect(books.unreadableNews("n1", undefined)).toBe(false)
    expect(books.unreadableNews("n1", "cannot read spec.images.x")).toBe(true)
    expect(books.unreadableNews("n1", "cannot read spec.images.x")).toBe(false)
    expect(books.unreadableNews("n2", "cannot read spec.images.x")).toBe(true)
    expect(books.unreadableNews("n1", "cannot read spec.images.y")).toBe(true)
    expect(books.unreadableNews("n1", undefined)).toBe(false)
    expect(books.unreadableNews("n1", "cannot read spec.images.y")).toBe(true)
  })

  it("tell a NodeImage's spec that is another object from the one seen last, per node", () => {
    const books = makeNodeImageBooks()
    const spec = { images: {} }
    expect(books.specChanged("n1", spec)).toBe(true)
    expect(books.specChanged("n1", spec)).toBe(false)
    expect(books.specChanged("n2", spec)).toBe(true)
    expect(books.specChanged("n1", { images: {} })).toBe(true)
    // None (the NodeImage is gone): looked at every time, and nothing is kept for the node.
    expect(books.specChanged("n1", undefined)).toBe(true)
    expect(books.specChanged("n1", undefined)).toBe(true)
  })

  it("parse tag times as Date.parse does", () => {
    const { parseTime } = makeNodeImageBooks()
    expect(parseTime("2026-12-02T10:00:00Z")).toBe(Date.parse("2026-12-02T10:00:00Z"))
    expect(parseTime("2026-12-02T10:00:00Z")).toBe(Date.parse("2026-12-02T10:00:00Z"))
  })
})

describe("the pre-download books", () => {
  it("hand back what was settled for the workload's uid only, and forget it", () => {
    const books = makeWorkloadBooks()
    expect(books.settled("Deployment:default/web", "u1")).toBeUndefined()
    books.settle("Deployment:default/web", { uid: "u1", settled: "rev-1" })
    expect(books.settled("Deployment:default/web", "u1")).toBe("rev-1")
    // A workload re-created under the name starts afresh.
    expect(books.settled("Deployment:default/web", "u2")).toBeUndefined()
    books.settle("Deployment:default/web", undefined)
    expect(books.settled("Deployment:default/web", "u1")).toBeUndefined()
    expect(books.size()).toBe(0)
  })
})
