import { describe, expect, it } from "vitest"
import { applyDefaults, prune, schemaViolations } from "../../../apiserver/admission/structuralSchema.ts"
import type { StructuralSchema } from "../../../apiserver/admission/structuralSchema.ts"

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
})
