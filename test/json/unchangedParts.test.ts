import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"
import { keepUnchanged } from "../../src/json/unchangedParts.ts"

const copy = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

describe("keepUnchanged", () => {
  it("gives the previous version's parts where they are equal, and the previous version itself when all is", () => {
    const previous = { spec: { images: { a: { tags: [{ tag: "1" }] } } }, status: { tags: [{ tag: "1", phase: "Pulling" }], n: 1 } }
    const next = copy(previous)
    next.status.tags[0]!.phase = "Succeeded"
    const kept = keepUnchanged(next, previous) as typeof previous
    expect(kept).toEqual(next)
    expect(kept.spec).toBe(previous.spec)
    expect(kept.status).not.toBe(previous.status)
    expect(kept.status.tags[0]).not.toBe(previous.status.tags[0])
    expect(keepUnchanged(copy(previous), previous)).toBe(previous)
    // Neither argument is changed.
    expect(next.spec).not.toBe(previous.spec)
    expect(previous.status.tags[0]!.phase).toBe("Pulling")
  })

  it("tells apart an added or removed member, arrays of another length, an array from an object", () => {
    const previous = { a: { x: 1 }, b: [1, 2], c: { 0: 1 } }
    expect(keepUnchanged({ a: { x: 1, y: 2 }, b: [1, 2], c: { 0: 1 } }, previous)).not.toBe(previous)
    expect(keepUnchanged({ a: {}, b: [1, 2], c: { 0: 1 } }, previous)).not.toBe(previous)
    expect(keepUnchanged({ a: { x: 1 }, b: [1], c: { 0: 1 } }, previous)).not.toBe(previous)
    expect(keepUnchanged({ a: { x: 1 }, b: [1, 2], c: [1] }, previous)).not.toBe(previous)
    expect(keepUnchanged({ a: { x: 1 }, b: [1, 2] }, previous)).not.toBe(previous)
  })

  it("keeps a key named __proto__ as data", () => {
    const previous = JSON.parse('{"a":{"x":1},"b":1}')
    const kept = keepUnchanged(JSON.parse('{"a":{"x":1},"b":2,"__proto__":{"polluted":true}}'), previous) as Record<string, unknown>
    expect(Object.hasOwn(kept, "__proto__")).toBe(true)
    expect(kept["a"]).toBe(previous.a)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("is equal to what came, whatever came before", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (value, previous) => {
        const kept = keepUnchanged(value, previous)
        expect(kept).toEqual(value)
        if (JSON.stringify(value) === JSON.stringify(previous) && typeof previous === "object") expect(kept).toBe(previous)
      })
    )
  })
})

describe("keepUnchanged with a template (another object's version)", () => {
  it("takes what changed from the template where equal, and what did not from the previous version", () => {
    const previous = { a: { x: 1 }, b: { y: "before" } }
    const template = { a: { x: 1 }, b: { y: "after" }, c: { z: [1, { w: "same" }] } }
    const kept = keepUnchanged(
      copy({ a: { x: 1 }, b: { y: "after" }, c: { z: [1, { w: "same" }] } }),
      previous,
      template
    ) as typeof template
    expect(kept.a).toBe(previous.a)
    expect(kept.b).toBe(template.b)
    expect(kept.c).toBe(template.c)
    // Equal in part: the equal parts are the template's, the container the version's own.
    const partly = keepUnchanged(copy({ c: { z: [2, { w: "same" }] } }), undefined, template) as typeof template
    expect(partly.c).not.toBe(template.c)
    expect(partly.c.z[1]).toBe(template.c.z[1])
  })

  it("writes equal strings into the version's own containers, never into frozen ones, and is equal to what came", () => {
    const template = { a: "shared", b: ["shared"] }
    const frozen = Object.freeze({ a: "shared", b: Object.freeze(["shared", "other"]) })
    expect(keepUnchanged(frozen, undefined, template)).toBe(frozen)
    // The in-process server's objects are shared by its storage: not copied to share with the template.
    const equalMember = Object.freeze({ a: "other", b: Object.freeze(["shared"]) })
    expect(keepUnchanged(equalMember, undefined, template)).toBe(equalMember)
    const value = { a: "shared", b: ["shared", "other"] }
    expect(keepUnchanged(value, undefined, template)).toBe(value)
    expect(value).toEqual({ a: "shared", b: ["shared", "other"] })
  })

  it("is equal to what came, whatever came before and whatever the template", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.jsonValue(), (value, previous, template) => {
        const expected = structuredClone(value)
        const [previousBefore, templateBefore] = [structuredClone(previous), structuredClone(template)]
        const kept = keepUnchanged(value, previous, template)
        expect(kept).toEqual(expected)
        if (JSON.stringify(value) === JSON.stringify(previous) && typeof previous === "object") expect(kept).toBe(previous)
        // Neither the previous version nor the template is changed.
        expect(previous).toEqual(previousBefore)
        expect(template).toEqual(templateBefore)
      })
    )
  })
})

describe("a store", () => {
  it("keeps an unchanged spec the same object, so its view is not decoded again", () => {
    const decoded: Array<unknown> = []
    const store = makeStore(resources.nodeImage, {
      decode: (raw) => {
        decoded.push(raw["spec"])
        return raw["spec"]
      }
    })
    const version = (resourceVersion: string, phase: string): KubeObject => ({
      metadata: { name: "node-1", resourceVersion },
      spec: { images: { nginx: { tags: [{ tag: "1.25", version: 1 }] } } },
      status: { imageStatuses: { nginx: { tags: [{ tag: "1.25", phase }] } } }
    })
    Effect.runSync(store.listed([version("1", "Pulling")]))
    Effect.runSync(store.written(version("2", "Succeeded")))
    expect(decoded).toHaveLength(2)
    expect(decoded[1]).toBe(decoded[0])
    expect(store.get("node-1")?.["status"]).toEqual({ imageStatuses: { nginx: { tags: [{ tag: "1.25", phase: "Succeeded" }] } } })
  })
})
