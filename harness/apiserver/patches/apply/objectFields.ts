// The fields of a value, walked with its type as structured-merge-diff walks a typed value: the
// set of fields a configuration sets (what its applier will own), the named fields a set implies,
// and a value without some of its fields.
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../../src/json/plainObject.ts"
import { FieldSet, fieldElement, indexElement, keyElement, valueElement } from "./fieldSet.ts"
import type { PathElement } from "./fieldSet.ts"
import { resolve } from "./fieldTypes.ts"
import type { FieldType } from "./fieldTypes.ts"

type ListType = Extract<FieldType, { readonly _tag: "List" }>

/** How a list item is addressed: by its value in a set, by its key fields in a map. */
export const itemElement = (list: ListType, item: unknown, index: number): PathElement => {
  if (list.listType === "set") return valueElement(item)
  if (!isPlainObject(item)) return indexElement(index)
  const keys: Record<string, unknown> = {}
  for (const key of list.keys) if (item[key] !== undefined) keys[key] = item[key]
  return keyElement(keys)
}

const isEmptyObject = (value: unknown): boolean => isPlainObject(value) && Object.keys(value).length === 0

/**
 * The fields a value sets (structured-merge-diff's ToFieldSet): leaves, list items, map keys, and
 * struct fields whose value is null or an empty object; a struct field holding more is implied
 * by its children.
 */
export const toFieldSet = (value: unknown, type: FieldType): FieldSet => {
  const set = new FieldSet()
  const walk = (node: FieldSet, current: unknown, currentType: FieldType): void => {
    const resolved = resolve(currentType, current)
    switch (resolved._tag) {
      case "Struct":
        for (const [name, child] of Object.entries(current as JsonObject)) {
          if (child === undefined) continue
          const { type: childType, named } = resolved.child(name)
          const element = fieldElement(name)
          const sub = new FieldSet()
          walk(sub, child, childType)
          if (child === null || isEmptyObject(child) || !named) sub.member = true
          if (!sub.isEmpty()) node.children.set(element, sub)
        }
        return
      case "List":
        ;(current as ReadonlyArray<unknown>).forEach((item, index) => {
          const sub = new FieldSet()
          walk(sub, item, resolved.element)
          sub.member = true
          node.children.set(itemElement(resolved, item, index), sub)
        })
        return
      default:
        node.member = true
    }
  }
  walk(set, value, type)
  // The object itself is not a field.
  set.member = false
  return set
}

/**
 * The set with every named struct field that has members below it made a member too
 * (structured-merge-diff's EnsureNamedFieldsAreMembers), so that removing the set removes them.
 */
export const withNamedFields = (set: FieldSet, value: unknown, type: FieldType): FieldSet => {
  const out = new FieldSet()
  out.member = set.member
  const resolved = resolve(type, value)
  for (const [element, child] of set.children) {
    let childValue: unknown
    let childType: FieldType = { _tag: "Leaf" }
    let named = false
    if (resolved._tag === "Struct" && element.startsWith("f:")) {
      const name = element.slice(2)
      childValue = isPlainObject(value) ? value[name] : undefined
      ;({ type: childType, named } = resolved.child(name))
    } else if (resolved._tag === "List" && Array.isArray(value)) {
      childType = resolved.element
      childValue = value.find((item, index) => itemElement(resolved, item, index) === element)
    }
    const converted = withNamedFields(child, childValue, childType)
    if (named && child.children.size > 0) converted.member = true
    out.children.set(element, converted)
  }
  return out
}

/** The value without the set's members (each with everything under it); emptied maps and lists go too. */
export const removeFields = (value: unknown, set: FieldSet, type: FieldType): unknown => {
  if (set.children.size === 0) return value
  const resolved = resolve(type, value)
  if (resolved._tag === "Struct" && isPlainObject(value)) {
    const out: Record<string, unknown> = {}
    for (const [name, child] of Object.entries(value)) {
      const node = set.children.get(fieldElement(name))
      if (node?.member === true) continue
      const kept = node === undefined ? child : removeFields(child, node, resolved.child(name).type)
      if (kept !== undefined) out[name] = kept
    }
    return Object.keys(out).length === 0 && Object.keys(value).length > 0 ? undefined : out
  }
  if (resolved._tag === "List" && Array.isArray(value)) {
    const out: Array<unknown> = []
    value.forEach((item, index) => {
      const node = set.children.get(itemElement(resolved, item, index))
      if (node?.member === true) return
      const kept = node === undefined ? item : removeFields(item, node, resolved.element)
      if (kept !== undefined) out.push(kept)
    })
    return out.length === 0 && value.length > 0 ? undefined : out
  }
  return value
}
