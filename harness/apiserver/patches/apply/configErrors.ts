// What makes an apply configuration unusable before anything merges: list items of a set or map
// list that collide (two containers named "app"), or a map list item without its key fields.
// structured-merge-diff refuses to build a typed value of them; so does this server, with its words.
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import { fieldElement, formatPath, valueElement } from "./fieldSet.ts"
import type { PathElement } from "./fieldSet.ts"
import { resolve } from "./fieldTypes.ts"
import type { FieldType } from "./fieldTypes.ts"
import { itemElement } from "./objectFields.ts"

/** The first problem of the configuration, as `<path>: <what>`, or undefined. */
export const configurationError = (config: unknown, type: FieldType): string | undefined => {
  const path: Array<PathElement> = []
  const walk = (value: unknown, current: FieldType): string | undefined => {
    const resolved = resolve(current, value)
    if (resolved._tag === "Struct") {
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        path.push(fieldElement(name))
        const error = walk(child, resolved.child(name).type)
        path.pop()
        if (error !== undefined) return error
      }
      return undefined
    }
    if (resolved._tag !== "List") return undefined
    const seen = new Set<PathElement>()
    for (const [index, item] of (value as ReadonlyArray<unknown>).entries()) {
      if (resolved.listType === "map" && (!isPlainObject(item) || resolved.keys.some((key) => item[key] === undefined))) {
        return (
          `${formatPath(path)}: element ${index}: associative list with keys has an element that omits key field ` +
          `${JSON.stringify(resolved.keys.find((key) => !isPlainObject(item) || item[key] === undefined))}`
        )
      }
      const element = itemElement(resolved, item, index)
      if (seen.has(element)) {
        const shown = resolved.listType === "set" ? formatPath([valueElement(item)]) : formatPath([element])
        return `${formatPath(path)}: duplicate entries for key ${shown}`
      }
      seen.add(element)
      path.push(element)
      const error = walk(item, resolved.element)
      path.pop()
      if (error !== undefined) return error
    }
    return undefined
  }
  return walk(config, type)
}
