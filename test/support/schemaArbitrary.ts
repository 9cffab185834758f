// Objects drawn from a CRD's structural schema, for property tests: every declared property may
// appear, required ones always do; numbers mostly from the boundaries of int32, int64 and
// JavaScript's safe integers; strings from small pools by field name, a few valid and a few
// invalid, so that many objects are admitted.
import * as fc from "fast-check"
import type { StructuralSchema } from "../../harness/apiserver/admission/structuralSchema.ts"

const boundaries = [0, 1, -1, 3, 600, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 62, 2 ** 63, 1e300, -1e300, 0.5]
const numbers = fc.oneof(
  { arbitrary: fc.constantFrom(1, 3, 600, 3600), weight: 6 },
  { arbitrary: fc.constantFrom(...boundaries), weight: 3 },
  { arbitrary: fc.integer(), weight: 1 }
)

const hex = "a".repeat(64)
/** Strings by field name: a few valid values and a few invalid ones, so that many objects are admitted. */
const stringPools: Readonly<Record<string, ReadonlyArray<string>>> = {
  image: ["nginx", "nginx:1.9.1", "redis:7", `busybox@sha256:${hex}`, "Nginx:1"],
  images: ["nginx", "redis:7", "registry.k8s.io/pause:3.9"],
  tag: ["latest", "1.25", "v1"],
  type: ["Always", "Never"],
  operator: ["In", "Exists"],
  key: ["app", "zone"],
  values: ["a", "b"],
  names: ["n1", "n2"],
  schedule: ["*/5 * * * *", "@daily", "0 2 * * *", "not a schedule"],
  timeZone: ["Europe/Berlin", "UTC"]
}
const mapKeys: Readonly<Record<string, ReadonlyArray<string>>> = {
  images: ["nginx", "redis", "registry.k8s.io/pause"]
}
const strings = (name: string) => fc.constantFrom(...(stringPools[name] ?? ["a", "b"]))

/** Values for a structural schema node: every declared property may appear, required ones always do. */
export const fromSchema = (schema: StructuralSchema, name: string): fc.Arbitrary<unknown> => {
  if (schema["x-kubernetes-int-or-string"] === true) return fc.oneof(numbers, fc.constantFrom("50%", "4", "200%", "x"))
  if (schema["x-kubernetes-preserve-unknown-fields"] === true) return fc.constant({})
  switch (schema.type) {
    case "integer":
    case "number":
      return numbers
    case "boolean":
      return fc.boolean()
    case "string":
      if (schema.enum !== undefined) return fc.constantFrom(...(schema.enum as ReadonlyArray<string>))
      return schema.format === "date-time" ? fc.constant("2026-12-02T10:00:00Z") : strings(name)
    case "array":
      return fc.array(fromSchema(schema.items!, name), { maxLength: 2 })
    default: {
      const properties = schema.properties ?? {}
      if (Object.keys(properties).length > 0) {
        // An optional field is left out two times in three: each one present may be refused.
        const required = schema.required ?? []
        const fields = Object.fromEntries(
          Object.entries(properties).map(([key, child]) => [
            key,
            required.includes(key)
              ? fromSchema(child, key)
              : fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: fromSchema(child, key), weight: 1 })
          ])
        )
        return fc.record(fields).map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)))
      }
      const values = schema.additionalProperties
      if (typeof values !== "object") return fc.constant({})
      return fc.dictionary(fc.constantFrom(...(mapKeys[name] ?? ["a", "app"])), fromSchema(values, name), { maxKeys: 2 })
    }
  }
}
