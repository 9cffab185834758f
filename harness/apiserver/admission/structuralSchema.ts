// What kube-apiserver does with a CRD's structural OpenAPI v3 schema before it stores an object:
// prune the fields the schema does not declare (and nulls where null is not allowed), apply the
// defaults, and validate types, enums, bounds and formats, with kube-openapi's messages.
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { servedKinds } from "../catalog.ts"
import { quote } from "../storage/storeErrors.ts"
import type { Cause } from "../storage/storeErrors.ts"

/** A node of a structural schema, as the CRDs in src/api/crd carry them. */
export interface StructuralSchema {
  readonly type?: string
  readonly properties?: Readonly<Record<string, StructuralSchema>>
  readonly additionalProperties?: StructuralSchema | boolean
  readonly items?: StructuralSchema
  readonly required?: ReadonlyArray<string>
  readonly default?: unknown
  readonly nullable?: boolean
  readonly enum?: ReadonlyArray<unknown>
  readonly format?: string
  readonly pattern?: string
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: boolean
  readonly exclusiveMaximum?: boolean
  readonly minLength?: number
  readonly maxLength?: number
  readonly minItems?: number
  readonly maxItems?: number
  readonly minProperties?: number
  readonly maxProperties?: number
  readonly "x-kubernetes-int-or-string"?: boolean
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean
  readonly "x-kubernetes-embedded-resource"?: boolean
  readonly "x-kubernetes-validations"?: ReadonlyArray<{
    readonly rule: string
    readonly message?: string
    readonly messageExpression?: string
    readonly fieldPath?: string
  }>
}

/** apimachinery's field.Path rendering: `.name` for fields, `[i]` for items, `[key]` for map keys. */
export const childPath = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)
const itemPath = (path: string, index: number): string => `${path}[${index}]`
const keyPath = (path: string, key: string): string => `${path}[${key}]`

const mapSchema = (schema: StructuralSchema): StructuralSchema | undefined =>
  typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined

/** The schemas directly under `schema`: its properties', its items' and its map values'. */
export const childSchemas = (schema: StructuralSchema): ReadonlyArray<StructuralSchema> => {
  const map = mapSchema(schema)
  return [
    ...Object.values(schema.properties ?? {}),
    ...(schema.items === undefined ? [] : [schema.items]),
    ...(map === undefined ? [] : [map])
  ]
}

/**
 * The stored value at the same place as a child of `value`, for an update. Validation skips a
 * value identical to the stored one there (the same object, as an applied patch keeps every
 * subtree it does not touch and pruning and defaulting keep what they do not change, or an equal
 * primitive): kube-apiserver's validation ratcheting (on by default since 1.30) ignores errors in
 * values an update leaves as they were. Pruning and defaulting do not skip anything: the stored
 * object may have been written through another version of the kind, with another schema.
 */
export const storedChild = (old: unknown, key: string): unknown => (isPlainObject(old) ? old[key] : undefined)
export const storedItem = (old: unknown, index: number): unknown => (Array.isArray(old) ? old[index] : undefined)
/** Whether `value` is the stored `old` as it was: nothing under it needs validating again. */
export const unchanged = (value: unknown, old: unknown): boolean => value === old && value !== undefined

const keepsUnknown = (schema: StructuralSchema): boolean =>
  schema["x-kubernetes-preserve-unknown-fields"] === true || schema.additionalProperties === true

// ---- pruning -----------------------------------------------------------------------------------

/**
 * The value without the fields its schema does not declare, and the paths of what was dropped
 * (reported as `unknown field "<path>"` under fieldValidation=Strict). A null where the schema
 * does not say nullable is dropped too, silently, so that a default can take its place.
 */
export const prune = (schema: StructuralSchema, value: unknown, path = ""): { value: unknown; unknown: Array<string> } => {
  const unknown: Array<string> = []
  // What needs nothing pruned comes back as it is: an applied patch keeps the stored subtrees it
  // does not touch, and validation recognises them by identity (see storedChild).
  const walk = (node: StructuralSchema, v: unknown, at: string): unknown => {
    if (Array.isArray(v))
      return node.items === undefined
        ? v
        : sameOrCopy(
            v,
            v.map((item, i) => walkChild(node.items!, item, itemPath(at, i)))
          )
    if (!isPlainObject(v) || node["x-kubernetes-int-or-string"] === true) return v
    // Copied only from the first key that changes: most of what a patch sends back is as stored.
    let out: Record<string, unknown> | undefined
    const keys = Object.keys(v)
    const map = mapSchema(node)
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!
      const child = v[key]
      const property = node.properties?.[key]
      let next: unknown
      if (property !== undefined) {
        next = walkChild(property, child, childPath(at, key))
      } else if (map !== undefined) {
        next = walkChild(map, child, keyPath(at, key))
      } else if (keepsUnknown(node) || (node.properties === undefined && node.type === undefined)) {
        next = child
      } else {
        unknown.push(childPath(at, key))
      }
      if (out === undefined && next !== child) {
        out = {}
        for (const kept of keys.slice(0, k)) out[kept] = v[kept]
      }
      if (out !== undefined && next !== undefined) out[key] = next
    }
    return out ?? v
  }
  const walkChild = (node: StructuralSchema, v: unknown, at: string): unknown =>
    v === null && node.nullable !== true ? undefined : walk(node, v, at)
  return { value: walk(schema, value, path), unknown }
}

/** `original` when every element of `mapped` is the one it came from, else `mapped`. */
const sameOrCopy = <A>(original: ReadonlyArray<A>, mapped: Array<A>): ReadonlyArray<A> =>
  mapped.every((item, i) => item === original[i]) ? original : mapped

// ---- defaulting --------------------------------------------------------------------------------

/** Adds to `into` every node of `schema` with no default at or below it; whether `schema` has one. */
const collectWithoutDefaults = (schema: StructuralSchema, into: Set<StructuralSchema>): boolean => {
  let has = schema.default !== undefined
  for (const child of childSchemas(schema)) has = collectWithoutDefaults(child, into) || has
  if (!has) into.add(schema)
  return has
}

// The served kinds' subtrees that declare no default, found once with the catalog: defaulting
// passes them by (a NodeImage's status and metadata have none, and are most of what a write sends).
const withoutDefaults: ReadonlySet<StructuralSchema> = (() => {
  const into = new Set<StructuralSchema>()
  for (const kind of servedKinds) if (kind.structural !== undefined) collectWithoutDefaults(kind.structural, into)
  return into
})()

/** Defaults apply top-down: a defaulted parent then receives its children's defaults. Nothing to add: `value` itself. */
export const applyDefaults = (schema: StructuralSchema, value: unknown): unknown => {
  if (withoutDefaults.has(schema)) return value
  if (Array.isArray(value))
    return schema.items
      ? sameOrCopy(
          value,
          value.map((v) => applyDefaults(schema.items!, v))
        )
      : value
  if (!isPlainObject(value)) return value
  // Copied only once something is added below: most of what a patch sends back is as stored.
  let out: Record<string, unknown> | undefined
  const defaulted = (key: string, child: StructuralSchema, withOwnDefault: boolean) => {
    const current = (out ?? value)[key]
    let next = current === undefined && withOwnDefault && child.default !== undefined ? structuredClone(child.default) : current
    if (next !== undefined) next = applyDefaults(child, next)
    if (next === current) return
    out ??= { ...value }
    out[key] = next
  }
  for (const [key, child] of Object.entries(schema.properties ?? {})) defaulted(key, child, true)
  const map = mapSchema(schema)
  if (map !== undefined) for (const key of Object.keys(out ?? value)) defaulted(key, map, false)
  return out ?? value
}

// ---- validation --------------------------------------------------------------------------------

/**
 * kube-apiserver reads a JSON integer into an int64; one beyond (99999999999999999999, 1e300) is a
 * float to it, and a float past 2^53 is no integer for kube-openapi, so `type: integer` refuses it.
 */
const int64Limit = 2 ** 63

/** The JSON type name kube-openapi reports for a value. */
const jsonType = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) < int64Limit ? "integer" : "number"
  if (typeof value === "object") return "object"
  return typeof value
}

const hasType = (schema: StructuralSchema, value: unknown): boolean => {
  const actual = jsonType(value)
  if (schema["x-kubernetes-int-or-string"] === true) return actual === "integer" || actual === "string"
  switch (schema.type) {
    case undefined:
      return true
    case "number":
      return actual === "number" || actual === "integer"
    default:
      return actual === schema.type
  }
}

const rfc3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/

/** apimachinery renders an invalid value as Go's %v/%q would: strings quoted, numbers bare. */
const shown = (value: unknown): string =>
  typeof value === "string" ? quote(value) : typeof value === "object" ? quote(value) : String(value)

/**
 * Every violation of the schema's own keywords (not its CEL rules: see celRules.ts), in the words
 * of kube-openapi as apiextensions-apiserver converts them to field errors.
 */
export const schemaViolations = (schema: StructuralSchema, value: unknown, path = "", old?: unknown): Array<Cause> => {
  const causes: Array<Cause> = []
  const add = (field: string, message: string) => causes.push({ field, message })
  const inBody = (at: string) => `${at === "" ? "body" : at} in body`
  const walk = (node: StructuralSchema, v: unknown, at: string, was: unknown): void => {
    if (unchanged(v, was)) return
    if (v === null) {
      if (node.nullable !== true) add(at, `Invalid value: "null": ${inBody(at)} must be of type ${node.type ?? "object"}: "null"`)
      return
    }
    if (!hasType(node, v)) {
      const expected = node["x-kubernetes-int-or-string"] === true ? "integer,string" : node.type
      add(at, `Invalid value: ${quote(jsonType(v))}: ${inBody(at)} must be of type ${expected}: ${quote(jsonType(v))}`)
      return
    }
    if (node.enum !== undefined && !node.enum.some((e) => e === v)) {
      add(at, `Unsupported value: ${shown(v)}: supported values: ${node.enum.map(shown).join(", ")}`)
    }
    if (typeof v === "number") numberViolations(node, v, at, add, inBody)
    if (typeof v === "string") stringViolations(node, v, at, add, inBody)
    if (Array.isArray(v)) {
      if (node.maxItems !== undefined && v.length > node.maxItems) {
        add(at, `Too many: ${v.length}: must have at most ${node.maxItems} items`)
      }
      if (node.minItems !== undefined && v.length < node.minItems) {
        add(at, `Invalid value: ${v.length}: ${inBody(at)} should have at least ${node.minItems} items`)
      }
      if (node.items !== undefined)
        v.forEach((item, i) => {
          walk(node.items!, item, itemPath(at, i), storedItem(was, i))
        })
    }
    if (isPlainObject(v))
      objectViolations(node, v, at, add, inBody, (child, c, key, childAt) => walk(child, c, childAt, storedChild(was, key)))
  }
  walk(schema, value, path, old)
  return causes
}

type Add = (field: string, message: string) => void

const numberViolations = (node: StructuralSchema, v: number, at: string, add: Add, inBody: (at: string) => string) => {
  if (node.minimum !== undefined) {
    if (node.exclusiveMinimum === true ? v <= node.minimum : v < node.minimum) {
      const relation = node.exclusiveMinimum === true ? "greater than" : "greater than or equal to"
      add(at, `Invalid value: ${v}: ${inBody(at)} should be ${relation} ${node.minimum}`)
    }
  }
  if (node.maximum !== undefined) {
    if (node.exclusiveMaximum === true ? v >= node.maximum : v > node.maximum) {
      const relation = node.exclusiveMaximum === true ? "less than" : "less than or equal to"
      add(at, `Invalid value: ${v}: ${inBody(at)} should be ${relation} ${node.maximum}`)
    }
  }
}

const patternsOf = (schema: StructuralSchema): ReadonlyArray<string> => [
  ...(schema.pattern === undefined ? [] : [schema.pattern]),
  ...childSchemas(schema).flatMap(patternsOf)
]

// The served kinds' patterns are few and fixed: each is compiled once, with the catalog (compiling
// one for every string validated was a hot spot). Any other pattern is compiled where it is used.
const compiledPatterns: ReadonlyMap<string, RegExp> = new Map(
  servedKinds.flatMap((kind) => (kind.structural === undefined ? [] : patternsOf(kind.structural))).map((p) => [p, new RegExp(p, "u")])
)
const patternOf = (pattern: string): RegExp => compiledPatterns.get(pattern) ?? new RegExp(pattern, "u")

const stringViolations = (node: StructuralSchema, v: string, at: string, add: Add, inBody: (at: string) => string) => {
  const length = [...v].length
  if (node.maxLength !== undefined && length > node.maxLength) {
    add(at, `Too long: may not be more than ${node.maxLength} bytes`)
  }
  if (node.minLength !== undefined && length < node.minLength) {
    add(at, `Invalid value: ${quote(v)}: ${inBody(at)} should be at least ${node.minLength} chars long`)
  }
  if (node.pattern !== undefined && !patternOf(node.pattern).test(v)) {
    add(at, `Invalid value: ${quote(v)}: ${inBody(at)} should match '${node.pattern}'`)
  }
  if (node.format === "date-time" && !rfc3339.test(v)) {
    add(at, `Invalid value: ${quote(v)}: ${inBody(at)} must be of type date-time: ${quote(v)}`)
  }
}

const objectViolations = (
  node: StructuralSchema,
  v: JsonObject,
  at: string,
  add: Add,
  inBody: (at: string) => string,
  walk: (node: StructuralSchema, v: unknown, key: string, at: string) => void
) => {
  const size = Object.keys(v).length
  if (node.maxProperties !== undefined && size > node.maxProperties) {
    add(at, `Too many: ${size}: must have at most ${node.maxProperties} items`)
  }
  if (node.minProperties !== undefined && size < node.minProperties) {
    add(at, `Invalid value: ${size}: ${inBody(at)} should have at least ${node.minProperties} properties`)
  }
  for (const name of node.required ?? []) {
    if (v[name] === undefined) add(childPath(at, name), "Required value")
  }
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    if (v[key] !== undefined) walk(child, v[key], key, childPath(at, key))
  }
  const map = mapSchema(node)
  if (map !== undefined) for (const [key, child] of Object.entries(v)) walk(map, child, key, keyPath(at, key))
}
