import { describe, expect, it } from "vitest"
import { celViolations } from "../../../../harness/apiserver/admission/celRules.ts"
import { applyDefaults, prune, schemaViolations } from "../../../../harness/apiserver/admission/structuralSchema.ts"
import type { StructuralSchema } from "../../../../harness/apiserver/admission/structuralSchema.ts"
import { findKind } from "../../../../harness/apiserver/catalog.ts"

const schema: StructuralSchema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 3, pattern: "^[a-z]+$" },
    count: { type: "integer", minimum: 1, maximum: 5, default: 2 },
    mode: { type: "string", enum: ["A", "B"] },
    either: { "x-kubernetes-int-or-string": true },
    tags: { type: "array", maxItems: 2, items: { type: "object", properties: { k: { type: "string" } }, required: ["k"] } },
    labels: { type: "object", additionalProperties: { type: "string" } },
    free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    when: { type: "string", format: "date-time" },
    nested: { type: "object", properties: { deep: { type: "integer", default: 7 } }, default: {} }
  }
}

describe("structural schema", () => {
  it("prunes undeclared fields (reporting their paths) and nulls, keeps what may be unknown", () => {
    const { value, unknown } = prune(schema, {
      name: "ab",
      extra: 1,
      tags: [{ k: "x", other: true }],
      labels: { any: "thing" },
      free: { whatever: { goes: 1 } },
      mode: null
    })
    expect(value).toEqual({ name: "ab", tags: [{ k: "x" }], labels: { any: "thing" }, free: { whatever: { goes: 1 } } })
    expect(unknown).toEqual(["extra", "tags[0].other"])
  })

  it("applies defaults top-down", () => {
    expect(applyDefaults(schema, {})).toEqual({ count: 2, nested: { deep: 7 } })
    expect(applyDefaults(schema, { count: 4, nested: { deep: 1 } })).toEqual({ count: 4, nested: { deep: 1 } })
  })

  it("passes by what a served kind declares no default in, and still defaults the rest", () => {
    const nodeImage = findKind("apps.kruise.io", "v1beta1", "nodeimages")!.structural!
    const untouchable = (what: string) =>
      new Proxy(
        {},
        { get: () => expect.unreachable(`defaulting read ${what}`), ownKeys: () => expect.unreachable(`defaulting listed ${what}`) }
      )
    const status = { imageStatuses: untouchable("status.imageStatuses") }
    const metadata = untouchable("metadata")
    const tag = { tag: "v1", ownerReferences: untouchable("an owner reference list") }
    const object = { metadata, spec: { images: { "a/b": { tags: [tag] } } }, status }
    const defaulted = applyDefaults(nodeImage, object) as typeof object
    expect(defaulted.metadata).toBe(metadata)
    expect(defaulted.spec.images["a/b"]!.tags[0]).toMatchObject({ tag: "v1", version: 0, imagePullPolicy: "IfNotPresent" })
    // The status's counters have defaults: it is walked, its image statuses are not.
    expect(defaulted.status.imageStatuses).toBe(status.imageStatuses)
    expect((defaulted.status as { desired?: number }).desired).toBe(0)
  })

  it("reports violations in kube-openapi's words", () => {
    const causes = schemaViolations(schema, {
      name: "ABCD",
      count: 9,
      mode: "C",
      either: 1.5,
      tags: [{}, { k: "a" }, { k: "b" }],
      labels: { a: 1 },
      when: "yesterday"
    })
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      "name: Too long: may not be more than 3 bytes",
      "name: Invalid value: \"ABCD\": name in body should match '^[a-z]+$'",
      "count: Invalid value: 9: count in body should be less than or equal to 5",
      'mode: Unsupported value: "C": supported values: "A", "B"',
      'either: Invalid value: "number": either in body must be of type integer,string: "number"',
      "tags: Too many: 3: must have at most 2 items",
      "tags[0].k: Required value",
      'labels[a]: Invalid value: "integer": labels[a] in body must be of type string: "integer"',
      'when: Invalid value: "yesterday": when in body must be of type date-time: "yesterday"'
    ])
    expect(schemaViolations(schema, { name: "ab", count: 1, either: "50%", when: "2030-01-01T00:00:00Z" })).toEqual([])
  })

  // kube-apiserver reads an integer into an int64, and a float past 2^53 is no integer to kube-openapi.
  it("takes an integer beyond int64 for a number, as kube-apiserver does; below it, the bounds decide", () => {
    const messages = (count: number) => schemaViolations(schema, { count }).map((c) => `${c.field}: ${c.message}`)
    expect(messages(1e300)).toEqual(['count: Invalid value: "number": count in body must be of type integer: "number"'])
    expect(messages(2 ** 63)).toEqual(['count: Invalid value: "number": count in body must be of type integer: "number"'])
    expect(messages(2 ** 53)).toEqual(["count: Invalid value: 9007199254740992: count in body should be less than or equal to 5"])
  })

  // kube-apiserver's validation ratcheting (CRDValidationRatcheting, on by default since 1.30):
  // an update is not refused for values it leaves as they were. Here "as they were" is the stored
  // value itself, which an applied patch keeps for every subtree it does not touch.
  describe("on an update, what the update left as it was", () => {
    const stored = { name: "ABCD", tags: [{}], labels: { a: 1 }, nested: { deep: 1, extra: true } }

    it("is not reported again, while what it changed is", () => {
      const patched = { ...stored, count: 9 }
      expect(schemaViolations(schema, patched, "", stored).map((c) => c.field)).toEqual(["count"])
      expect(schemaViolations(schema, patched).map((c) => c.field)).toEqual(["name", "name", "count", "tags[0].k", "labels[a]"])
    })

    // Stricter than kube-apiserver, which compares by deep equality: only a stored object can
    // hold an invalid value, and this server never stores one, so the difference cannot show.
    it("is an equal primitive or the stored object itself; an equal copy of an object is checked again", () => {
      const patched = { ...stored, tags: [{}], labels: { ...stored.labels } }
      expect(schemaViolations(schema, patched, "", stored).map((c) => c.field)).toEqual(["tags[0].k"])
    })

    it("is kept as the same object by pruning and defaulting, which still prune and default everything", () => {
      const patched = { ...stored, mode: "A" }
      const pruned = prune(schema, patched)
      // nested.extra is pruned though the update left it as it was: the stored object may have
      // been written through another version of the kind, whose schema declared it.
      expect(pruned.unknown).toEqual(["nested.extra"])
      const kept = pruned.value as typeof stored
      expect(kept.tags).toBe(stored.tags)
      expect(kept.labels).toBe(stored.labels)
      expect(kept.nested).toEqual({ deep: 1 })
      const defaulted = applyDefaults(schema, kept) as typeof stored
      expect(defaulted).toEqual({ ...kept, count: 2 })
      expect(defaulted.tags).toBe(stored.tags)
      expect(applyDefaults(schema, { count: 3, nested: stored.nested }) as object).toEqual({ count: 3, nested: stored.nested })
      const complete = { count: 3, nested: { deep: 1 } }
      expect(applyDefaults(schema, complete)).toBe(complete)
    })

    it("does not have its CEL rules evaluated again", () => {
      const ruled: StructuralSchema = {
        type: "object",
        properties: {
          limits: {
            type: "object",
            properties: { min: { type: "integer" }, max: { type: "integer" } },
            "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }]
          },
          name: { type: "string" }
        }
      }
      const old = { limits: { min: 5, max: 1 }, name: "a" }
      expect(celViolations(ruled, { ...old, name: "b" }, "", old)).toEqual([])
      expect(celViolations(ruled, { ...old, limits: { min: 5, max: 2 } }, "", old).map((v) => v.message)).toEqual([
        "min must not exceed max"
      ])
    })
  })
})
