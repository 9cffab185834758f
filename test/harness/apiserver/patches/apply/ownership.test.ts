// Server-side apply's decisions, on a schema with every structured-merge-diff list and map type.
import * as fc from "fast-check"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { fromSchema } from "../../../../../harness/apiserver/patches/apply/fieldTypes.ts"
import { merge } from "../../../../../harness/apiserver/patches/apply/merge.ts"
import type { ManagerEntry } from "../../../../../harness/apiserver/patches/apply/managers.ts"
import { toFieldSet } from "../../../../../harness/apiserver/patches/apply/objectFields.ts"
import { applyConfiguration, recordUpdate } from "../../../../../harness/apiserver/patches/apply/ownership.ts"
import type { Writer } from "../../../../../harness/apiserver/patches/apply/ownership.ts"
import type { StructuralSchema } from "../../../../../harness/apiserver/admission/structuralSchema.ts"

const schema = {
  type: "object",
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: {
      type: "object",
      properties: { name: { type: "string" }, labels: { type: "object", additionalProperties: { type: "string" } } }
    },
    spec: {
      type: "object",
      properties: {
        image: { type: "string" },
        replicas: { type: "integer" },
        tags: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" },
        args: { type: "array", items: { type: "string" } },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: { type: "object", properties: { name: { type: "string" }, port: { type: "integer" } } }
        },
        selector: { type: "object", "x-kubernetes-map-type": "atomic", properties: { a: { type: "string" }, b: { type: "string" } } },
        env: { type: "object", additionalProperties: { type: "string" } }
      }
    }
  }
} as unknown as StructuralSchema

const type = fromSchema(schema)
const writer = (manager: string): Writer => ({ type, manager, apiVersion: "example.io/v1", subresource: "", now: "2026-01-01T00:00:00Z" })
const object = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: "example.io/v1",
  kind: "Thing",
  metadata: { name: "t", ...(labels === undefined ? {} : { labels }) },
  spec
})

const apply = (
  live: Record<string, unknown> | undefined,
  config: Record<string, unknown>,
  managers: ReadonlyArray<ManagerEntry>,
  manager: string,
  force = false
) => applyConfiguration(live, config, managers, writer(manager), force)

const applied = (
  live: Record<string, unknown> | undefined,
  config: Record<string, unknown>,
  managers: ReadonlyArray<ManagerEntry>,
  manager: string,
  force = false
) => {
  const result = apply(live, config, managers, manager, force)
  if (Result.isFailure(result)) throw new Error(`conflicts: ${JSON.stringify(result.failure.conflicts.map((c) => c.path))}`)
  return result.success
}

const fieldsOf = (managers: ReadonlyArray<ManagerEntry>, manager: string) =>
  managers.find((m) => m.manager === manager)?.fields.toFieldsV1()

describe("merge by list and map type", () => {
  it("sets and map lists merge item by item, atomic lists and maps are replaced, granular maps merge by key", () => {
    const live = object({
      tags: ["a", "b"],
      args: ["x"],
      ports: [{ name: "http", port: 80 }],
      selector: { a: "1", b: "2" },
      env: { A: "1" }
    })
    const config = object({
      tags: ["c", "a"],
      args: ["y"],
      ports: [
        { name: "grpc", port: 90 },
        { name: "http", port: 81 }
      ],
      selector: { a: "3" },
      env: { B: "2" }
    })
    expect((merge(live, config, type) as { spec: unknown }).spec).toEqual({
      tags: ["a", "b", "c"],
      args: ["y"],
      ports: [
        { name: "http", port: 81 },
        { name: "grpc", port: 90 }
      ],
      selector: { a: "3" },
      env: { A: "1", B: "2" }
    })
  })

  it("the applier owns what its configuration sets: leaves, map keys, list items by value or key, atomic values whole", () => {
    const { managers } = applied(
      undefined,
      object({ image: "a", tags: ["x"], ports: [{ name: "http", port: 80 }], selector: { a: "1" }, env: { A: "1" } }, { app: "t" }),
      [],
      "one"
    )
    expect(fieldsOf(managers, "one")).toEqual({
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:spec": {
        "f:env": { "f:A": {} },
        "f:image": {},
        "f:ports": { 'k:{"name":"http"}': { ".": {}, "f:name": {}, "f:port": {} } },
        "f:selector": {},
        "f:tags": { 'v:"x"': {} }
      }
    })
  })
})

describe("field managers", () => {
  it("re-applying the same configuration changes nothing", () => {
    const spec = fc.record(
      {
        image: fc.constantFrom("a", "b"),
        replicas: fc.nat(5),
        tags: fc.uniqueArray(fc.constantFrom("x", "y", "z")),
        ports: fc.uniqueArray(fc.record({ name: fc.constantFrom("http", "grpc"), port: fc.nat(100) }), { selector: (p) => p.name }),
        env: fc.dictionary(fc.constantFrom("A", "B"), fc.string())
      },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(spec, (s) => {
        const first = applied(undefined, object(s), [], "one")
        const again = applied(first.object, object(s), first.managers, "one")
        expect(again.object).toEqual(first.object)
        expect(again.managers).toEqual(first.managers)
        // And everything the configuration sets is in the object.
        const have = toFieldSet(first.object, type)
        for (const path of toFieldSet(object(s), type).paths()) expect(have.has(path) || have.at(path) !== undefined).toBe(true)
      })
    )
  })

  it("a value another applier owns is a conflict, unless forced, which takes it over", () => {
    const one = applied(undefined, object({ image: "a", replicas: 1 }), [], "one")
    const refused = apply(one.object, object({ replicas: 2 }), one.managers, "two")
    expect(Result.isFailure(refused) && refused.failure.conflicts.map((c) => [c.manager.manager, c.path])).toEqual([
      ["one", ["f:spec", "f:replicas"]]
    ])
    // The same value is no conflict: both own it.
    const shared = applied(one.object, object({ replicas: 1 }), one.managers, "two")
    expect(fieldsOf(shared.managers, "one")).toEqual({ "f:spec": { "f:image": {}, "f:replicas": {} } })
    const forced = applied(one.object, object({ replicas: 2 }), one.managers, "two", true)
    expect((forced.object as { spec: unknown }).spec).toEqual({ image: "a", replicas: 2 })
    expect(fieldsOf(forced.managers, "one")).toEqual({ "f:spec": { "f:image": {} } })
    expect(fieldsOf(forced.managers, "two")).toEqual({ "f:spec": { "f:replicas": {} } })
  })

  it("a field left out of the configuration is removed when only its applier owned it", () => {
    const one = applied(undefined, object({ image: "a", tags: ["x", "y"], env: { A: "1" } }, { app: "t" }), [], "one")
    const two = applied(one.object, object({ tags: ["y"] }), one.managers, "two")
    const dropped = applied(two.object, object({ image: "a" }), two.managers, "one")
    // tags "x", env and the label only "one" owned: gone; tag "y" is also "two"'s: kept.
    expect(dropped.object).toEqual(object({ image: "a", tags: ["y"] }))
    expect(fieldsOf(dropped.managers, "one")).toEqual({ "f:spec": { "f:image": {} } })
  })

  it("an update takes the fields it changes from everyone, without conflicts, and owns only those", () => {
    const one = applied(undefined, object({ image: "a", replicas: 1 }), [], "one")
    const managers = recordUpdate(
      one.object,
      { ...one.object, spec: { image: "a", replicas: 3, args: ["x"] } },
      one.managers,
      writer("editor")
    )
    expect(fieldsOf(managers, "one")).toEqual({ "f:spec": { "f:image": {} } })
    expect(fieldsOf(managers, "editor")).toEqual({ "f:spec": { "f:args": {}, "f:replicas": {} } })
    expect(managers.find((m) => m.manager === "editor")).toMatchObject({ operation: "Update", time: "2026-01-01T00:00:00Z" })
    // A write that changes nothing records nothing.
    expect(recordUpdate(one.object, one.object, one.managers, writer("idle")).map((m) => m.manager)).toEqual(["one"])
  })

  it("a create is recorded with every field it sets, maps and structs as members", () => {
    const managers = recordUpdate(undefined, object({ env: { A: "1" } }, { app: "t" }), [], writer("creator"))
    expect(fieldsOf(managers, "creator")).toEqual({
      "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      "f:spec": { ".": {}, "f:env": { ".": {}, "f:A": {} } }
    })
  })
})
