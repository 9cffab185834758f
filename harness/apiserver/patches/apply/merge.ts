// An applied configuration merged into the live object (structured-merge-diff's Merge): the
// configuration's values win; struct fields and map keys merge one by one; set and map lists merge
// item by item (live items first, in their order, then new ones); atomic values are replaced whole.
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import { resolve } from "./fieldTypes.ts"
import type { FieldType } from "./fieldTypes.ts"
import { itemElement } from "./objectFields.ts"

const isEmptyContainer = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (Array.isArray(value) ? value.length === 0 : isPlainObject(value) && Object.keys(value).length === 0)

export const merge = (live: unknown, config: unknown, type: FieldType): unknown => {
  if (config === undefined) return live
  if (live === undefined) return config
  const resolved = resolve(type, live, config)
  if (resolved._tag === "Leaf" || resolved._tag === "Deduced" || (isEmptyContainer(live) && isEmptyContainer(config))) return config
  if (resolved._tag === "Struct") {
    const out: Record<string, unknown> = {}
    const left = live as Record<string, unknown>
    const right = config as Record<string, unknown>
    for (const name of Object.keys(left)) out[name] = merge(left[name], right[name], resolved.child(name).type)
    for (const name of Object.keys(right)) if (!Object.hasOwn(left, name)) out[name] = right[name]
    return out
  }
  const right = new Map((config as ReadonlyArray<unknown>).map((item, i) => [itemElement(resolved, item, i), item]))
  const out: Array<unknown> = []
  const seen = new Set<string>()
  ;(live as ReadonlyArray<unknown>).forEach((item, i) => {
    const element = itemElement(resolved, item, i)
    seen.add(element)
    out.push(merge(item, right.get(element), resolved.element))
  })
  for (const [element, item] of right) if (!seen.has(element)) out.push(item)
  return out
}
