// What structured-merge-diff needs to know of a kind's fields to merge and to track owners: which
// objects are structs (named fields) and which are maps (arbitrary keys), which values are atomic,
// and how list items are identified (x-kubernetes-list-type set or map with its keys; atomic, the
// default). Custom resources take it from their CRD schema, as kube-apiserver; the built-in kinds,
// served without a full schema, from a small description of the fields preheat and its users touch.
import { servedKinds } from "../../catalog.ts"
import type { ServedKind } from "../../catalog.ts"
import type { StructuralSchema } from "../../admission/structuralSchema.ts"

/** A child of a struct or map: its type, and whether it is a named field (not a map key). */
export interface Child {
  readonly type: FieldType
  readonly named: boolean
}

export type FieldType =
  /** A scalar, or an atomic list, map or struct: owned and replaced as a whole. */
  | { readonly _tag: "Leaf" }
  /** A granular struct or map: each key merged and owned on its own. */
  | { readonly _tag: "Struct"; readonly child: (name: string) => Child }
  /** A granular list: items identified by their value (set) or by key fields (map). */
  | { readonly _tag: "List"; readonly listType: "set" | "map"; readonly keys: ReadonlyArray<string>; readonly element: FieldType }
  /** Decided by the value: an object is a Struct of these, anything else a Leaf (as "deduced" types). */
  | { readonly _tag: "Deduced"; readonly struct: () => FieldType }

const leaf: FieldType = { _tag: "Leaf" }

/** What a type is for this value: Deduced resolved; a value of another shape is a Leaf. */
export const resolve = (type: FieldType, ...values: ReadonlyArray<unknown>): FieldType => {
  const present = values.filter((v) => v !== undefined)
  const objects = present.every((v) => typeof v === "object" && v !== null && !Array.isArray(v))
  const arrays = present.every(Array.isArray)
  switch (type._tag) {
    case "Deduced":
      return objects && present.length > 0 ? type.struct() : leaf
    case "Struct":
      return objects ? type : leaf
    case "List":
      return arrays ? type : leaf
    default:
      return type
  }
}

// Objects without a schema (preserved unknown fields): maps of deduced values, lists atomic.
const untypedStruct: FieldType = { _tag: "Struct", child: () => ({ type: untyped, named: false }) }
const untyped: FieldType = { _tag: "Deduced", struct: () => untypedStruct }

const mapOf = (element: FieldType): FieldType => ({ _tag: "Struct", child: () => ({ type: element, named: false }) })

const structOf = (fields: Readonly<Record<string, FieldType>>, other: Child = { type: untyped, named: false }): FieldType => ({
  _tag: "Struct",
  child: (name) => (Object.hasOwn(fields, name) ? { type: fields[name]!, named: true } : other)
})

// ObjectMeta, as k8s.io/apimachinery declares it.
const ownerReference = structOf({})
const objectMeta = structOf(
  {
    labels: mapOf(leaf),
    annotations: mapOf(leaf),
    finalizers: { _tag: "List", listType: "set", keys: [], element: leaf },
    ownerReferences: { _tag: "List", listType: "map", keys: ["uid"], element: ownerReference }
  },
  { type: leaf, named: true }
)

// ---- custom resources: from the CRD's structural schema --------------------------------------

/** The type a CRD schema describes, built whole (a kind's is built once, with the catalog: see `typeOfKind`). */
export const fromSchema = (schema: StructuralSchema | undefined): FieldType => {
  if (schema === undefined) return untyped
  const raw = schema as StructuralSchema & Readonly<Record<string, unknown>>
  if (raw["x-kubernetes-int-or-string"] === true) return leaf
  if (schema.type === "array") {
    const listType = raw["x-kubernetes-list-type"]
    // As structured-merge-diff: a list without a list type is atomic.
    return listType === "set" || listType === "map"
      ? {
          _tag: "List",
          listType,
          keys: (raw["x-kubernetes-list-map-keys"] as ReadonlyArray<string> | undefined) ?? [],
          element: fromSchema(schema.items)
        }
      : leaf
  }
  if (schema.type === "object" || schema.properties !== undefined) {
    if (raw["x-kubernetes-map-type"] === "atomic") return leaf
    const fields: Readonly<Record<string, FieldType>> = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([name, property]) => [name, fromSchema(property)])
    )
    const additional = typeof schema.additionalProperties === "object" ? fromSchema(schema.additionalProperties) : untyped
    return {
      _tag: "Struct",
      child: (name) => (Object.hasOwn(fields, name) ? { type: fields[name]!, named: true } : { type: additional, named: false })
    }
  }
  return schema.type === undefined && raw["x-kubernetes-preserve-unknown-fields"] === true ? untyped : leaf
}

// ---- built-in kinds ------------------------------------------------------------------------

// Fields of the built-in kinds that are maps (arbitrary keys), by dotted path without indices.
const builtinMaps: ReadonlySet<string> = new Set([
  "data",
  "stringData",
  "spec.nodeSelector",
  "spec.overhead",
  "status.capacity",
  "status.allocatable",
  ...["containers", "initContainers", "ephemeralContainers"].flatMap((c) => [`spec.${c}.resources.limits`, `spec.${c}.resources.requests`])
])

// Lists of the built-in kinds keyed by more than their strategic merge key.
const builtinListKeys: Readonly<Record<string, ReadonlyArray<string>>> = Object.fromEntries(
  ["containers", "initContainers", "ephemeralContainers"].map((c) => [`spec.${c}.ports`, ["containerPort", "protocol"]])
)

// A built-in object: a struct whose fields are named (Go structs), lists atomic unless the kind's
// strategic merge keys say otherwise (then a map by that key, or a set).
const builtinAt = (kind: ServedKind, path: string): FieldType => {
  if (builtinMaps.has(path)) return mapOf(leaf)
  const mergeKey = kind.mergeKeys?.[path]
  const element: FieldType = { _tag: "Deduced", struct: () => builtinStruct(kind, path) }
  if (mergeKey === "") return { _tag: "List", listType: "set", keys: [], element: leaf }
  if (mergeKey !== undefined) return { _tag: "List", listType: "map", keys: builtinListKeys[path] ?? [mergeKey], element }
  return element
}

const builtinStruct = (kind: ServedKind, path: string): FieldType => ({
  _tag: "Struct",
  child: (name) => ({ type: builtinAt(kind, path === "" ? name : `${path}.${name}`), named: true })
})

const objectOfKind = (kind: ServedKind): FieldType => {
  const body = kind.structural === undefined ? builtinStruct(kind, "") : fromSchema(kind.structural)
  return {
    _tag: "Struct",
    child: (name) => {
      if (name === "metadata") return { type: objectMeta, named: true }
      if (name === "apiVersion" || name === "kind") return { type: leaf, named: true }
      return body._tag === "Struct" ? body.child(name) : { type: untyped, named: false }
    }
  }
}

// Built once with the catalog: the served kinds and their schemas are fixed.
const kindTypes: ReadonlyMap<ServedKind, FieldType> = new Map(servedKinds.map((kind) => [kind, objectOfKind(kind)]))

/** The type of a whole object of the kind. */
export const typeOfKind = (kind: ServedKind): FieldType => kindTypes.get(kind) ?? objectOfKind(kind)
