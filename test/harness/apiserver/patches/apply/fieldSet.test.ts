import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  FieldSet,
  fieldElement,
  formatPath,
  indexElement,
  keyElement,
  valueElement
} from "../../../../../harness/apiserver/patches/apply/fieldSet.ts"
import type { FieldPath } from "../../../../../harness/apiserver/patches/apply/fieldSet.ts"

const element = fc.oneof(
  fc.constantFrom("spec", "image", "labels", "a.b", "x").map(fieldElement),
  fc.record({ name: fc.constantFrom("app", "side") }).map(keyElement),
  fc.constantFrom("v1", 2, true).map(valueElement),
  fc.nat(3).map(indexElement)
)
const path = fc.array(element, { minLength: 1, maxLength: 4 })
const fieldSet = fc.array(path, { maxLength: 12 }).map((paths) => FieldSet.of(paths))
const members = (set: FieldSet) => new Set([...set.paths()].map((p) => JSON.stringify(p)))

describe("FieldSet", () => {
  it("writes FieldsV1 as kube-apiserver does: '.' for a member with children, {} for a leaf", () => {
    const set = FieldSet.of([
      [fieldElement("data")],
      [fieldElement("data"), fieldElement("a")],
      [fieldElement("spec"), fieldElement("containers"), keyElement({ name: "app" }), fieldElement("image")],
      [fieldElement("metadata"), fieldElement("finalizers"), valueElement("x")]
    ])
    expect(set.toFieldsV1()).toEqual({
      "f:data": { ".": {}, "f:a": {} },
      "f:metadata": { "f:finalizers": { 'v:"x"': {} } },
      "f:spec": { "f:containers": { 'k:{"name":"app"}': { "f:image": {} } } }
    })
    expect(Object.keys(set.toFieldsV1())).toEqual(["f:data", "f:metadata", "f:spec"])
  })

  it("reads back what it writes", () => {
    fc.assert(
      fc.property(fieldSet, (set) => {
        const read = FieldSet.fromFieldsV1(JSON.parse(JSON.stringify(set.toFieldsV1())))
        expect(read).toBeDefined()
        expect(members(read!)).toEqual(members(set))
      })
    )
  })

  it("refuses what is not FieldsV1", () => {
    expect(FieldSet.fromFieldsV1([])).toBeUndefined()
    expect(FieldSet.fromFieldsV1({ spec: {} })).toBeUndefined()
    expect(FieldSet.fromFieldsV1({ "f:spec": 1 })).toBeUndefined()
    expect(FieldSet.fromFieldsV1({})?.isEmpty()).toBe(true)
  })

  it("union, difference and intersection are those of the member paths", () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, (a, b) => {
        const ma = members(a)
        const mb = members(b)
        expect(members(a.union(b))).toEqual(new Set([...ma, ...mb]))
        expect(members(a.difference(b))).toEqual(new Set([...ma].filter((p) => !mb.has(p))))
        expect(members(a.intersection(b))).toEqual(new Set([...ma].filter((p) => mb.has(p))))
      })
    )
  })

  it("a recursive difference also drops everything under the other's members", () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, (a, b) => {
        const under = (p: FieldPath) => [...b.paths()].some((q) => q.length <= p.length && q.every((e, i) => p[i] === e))
        const expected = new Set([...a.paths()].filter((p) => !under(p)).map((p) => JSON.stringify(p)))
        expect(members(a.recursiveDifference(b))).toEqual(expected)
      })
    )
  })

  it("prints paths as kube-apiserver's conflict messages do", () => {
    expect(
      formatPath([fieldElement("spec"), fieldElement("containers"), keyElement({ name: "app", port: 80 }), fieldElement("image")])
    ).toBe('.spec.containers[name="app",port=80].image')
    expect(formatPath([fieldElement("metadata"), fieldElement("finalizers"), valueElement("a")])).toBe('.metadata.finalizers[="a"]')
    expect(formatPath([fieldElement("items"), indexElement(2)])).toBe(".items[2]")
  })
})
