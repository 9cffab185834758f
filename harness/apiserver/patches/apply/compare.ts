// What changed between two versions of an object, field by field (structured-merge-diff's
// Compare): the fields added, modified and removed, which decide who owns what after a write.
import { isDeepStrictEqual } from "node:util"
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import { FieldSet, fieldElement } from "./fieldSet.ts"
import type { PathElement } from "./fieldSet.ts"
import { resolve } from "./fieldTypes.ts"
import type { FieldType } from "./fieldTypes.ts"
import { itemElement } from "./objectFields.ts"

export interface Comparison {
  readonly added: FieldSet
  readonly modified: FieldSet
  readonly removed: FieldSet
}

const isEmptyContainer = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (Array.isArray(value) ? value.length === 0 : isPlainObject(value) && Object.keys(value).length === 0)

/** Compares two values of a type (undefined: absent); paths are relative to them. */
export const compare = (before: unknown, after: unknown, type: FieldType): Comparison => {
  const result: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() }
  const path: Array<PathElement> = []
  const walk = (lhs: unknown, rhs: unknown, current: FieldType): void => {
    // The same value (a patch keeps every subtree it does not touch): nothing under it changed.
    if (lhs === rhs) return
    const resolved = resolve(current, lhs, rhs)
    // Both empty (or null), or a leaf: compared as a whole.
    if (resolved._tag === "Leaf" || resolved._tag === "Deduced" || (isEmptyContainer(lhs) && isEmptyContainer(rhs))) {
      if (lhs === undefined) result.added.insert(path)
      else if (rhs === undefined) result.removed.insert(path)
      else if (!isDeepStrictEqual(lhs, rhs)) result.modified.insert(path)
      return
    }
    if (resolved._tag === "Struct") {
      const left = (lhs ?? {}) as Record<string, unknown>
      const right = (rhs ?? {}) as Record<string, unknown>
      for (const name of new Set([...Object.keys(left), ...Object.keys(right)])) {
        path.push(fieldElement(name))
        walk(left[name], right[name], resolved.child(name).type)
        path.pop()
      }
    } else {
      const left = new Map(((lhs ?? []) as ReadonlyArray<unknown>).map((item, i) => [itemElement(resolved, item, i), item]))
      const right = new Map(((rhs ?? []) as ReadonlyArray<unknown>).map((item, i) => [itemElement(resolved, item, i), item]))
      for (const element of new Set([...left.keys(), ...right.keys()])) {
        path.push(element)
        walk(left.get(element), right.get(element), resolved.element)
        path.pop()
      }
    }
    if (path.length > 0 && lhs === undefined) result.added.insert(path)
    else if (path.length > 0 && rhs === undefined) result.removed.insert(path)
  }
  walk(before, after, type)
  return result
}
