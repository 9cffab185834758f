// Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in kinds, which
// `kubectl apply`, `kubectl patch` (its default) and `kubectl cordon` send. Like a merge patch,
// except that the lists the Go types mark as mergeable merge element by element on a key (or as
// sets, for lists of strings), and the `$patch`, `$retainKeys`, `$setElementOrder/` and
// `$deleteFromPrimitiveList/` directives of k8s.io/apimachinery's strategicpatch apply.
import { Data, Result } from "effect"
import type { MergeKeys } from "../catalog.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"

class StrategicPatchError extends Data.TaggedError("StrategicPatchError")<{ readonly message: string }> {}

const setElementOrder = "$setElementOrder/"
const deleteFromPrimitiveList = "$deleteFromPrimitiveList/"

/** A step of applying a patch: its value, or why the patch fails. */
type Patched<A> = Result.Result<A, StrategicPatchError>

const fail = (message: string): Patched<never> => Result.fail(new StrategicPatchError({ message }))

const child = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

const withoutDirectives = (patch: JsonObject): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(patch)) {
    if (key === "$patch" || key === "$retainKeys" || key.startsWith(setElementOrder) || key.startsWith(deleteFromPrimitiveList)) continue
    out[key] = isPlainObject(value) ? withoutDirectives(value) : value
  }
  return out
}

const mergeMap = (original: JsonObject, patch: JsonObject, path: string, keys: MergeKeys): Patched<Record<string, unknown>> =>
  Result.gen(function* () {
    const directive = patch["$patch"]
    if (directive === "replace") return withoutDirectives(patch)
    if (directive !== undefined && directive !== "merge" && directive !== "delete")
      return yield* fail(`Unknown patch type: ${String(directive)}`)
    const out: Record<string, unknown> = { ...original }
    for (const [key, value] of Object.entries(patch)) {
      if (key === "$patch" || key === "$retainKeys" || key.startsWith(setElementOrder)) continue
      if (key.startsWith(deleteFromPrimitiveList)) {
        const field = key.slice(deleteFromPrimitiveList.length)
        const current = out[field]
        if (Array.isArray(current) && Array.isArray(value)) out[field] = current.filter((v) => !value.includes(v))
        continue
      }
      if (value === null) {
        delete out[key]
        continue
      }
      const at = child(path, key)
      if (isPlainObject(value)) {
        if (value["$patch"] === "delete") delete out[key]
        else out[key] = yield* mergeMap(isPlainObject(out[key]) ? out[key] : {}, value, at, keys)
      } else if (Array.isArray(value)) {
        out[key] = yield* mergeList(Array.isArray(out[key]) ? out[key] : [], value, at, keys)
      } else {
        out[key] = value
      }
    }
    for (const [key, order] of Object.entries(patch)) {
      if (!key.startsWith(setElementOrder) || !Array.isArray(order)) continue
      const field = key.slice(setElementOrder.length)
      const current = out[field]
      if (Array.isArray(current)) out[field] = ordered(current, order, keys[child(path, field)])
    }
    const retain = patch["$retainKeys"]
    if (Array.isArray(retain)) for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key]
    return out
  })

const identity = (item: unknown, mergeKey: string | undefined): unknown =>
  mergeKey === undefined || mergeKey === "" || !isPlainObject(item) ? JSON.stringify(item) : JSON.stringify(item[mergeKey])

// The list in the order the client gave; elements it did not mention keep theirs, after.
const ordered = (list: ReadonlyArray<unknown>, order: ReadonlyArray<unknown>, mergeKey: string | undefined): Array<unknown> => {
  const rank = new Map(order.map((item, i) => [identity(item, mergeKey), i]))
  const known = list.filter((item) => rank.has(identity(item, mergeKey)))
  known.sort((a, b) => (rank.get(identity(a, mergeKey)) ?? 0) - (rank.get(identity(b, mergeKey)) ?? 0))
  return [...known, ...list.filter((item) => !rank.has(identity(item, mergeKey)))]
}

const mergeList = (
  original: ReadonlyArray<unknown>,
  patch: ReadonlyArray<unknown>,
  path: string,
  keys: MergeKeys
): Patched<Array<unknown>> =>
  Result.gen(function* () {
    const mergeKey = keys[path]
    if (mergeKey === undefined) return patch.map((v) => (isPlainObject(v) ? withoutDirectives(v) : v))
    if (patch.some((item) => isPlainObject(item) && item["$patch"] === "replace")) {
      return patch.filter((item) => !(isPlainObject(item) && item["$patch"] === "replace"))
    }
    if (mergeKey === "") {
      // A set of primitives: the patch's values are added.
      const out = [...original]
      for (const item of patch) if (!out.includes(item)) out.push(item)
      return out
    }
    const out: Array<unknown> = [...original]
    for (const item of patch) {
      if (!isPlainObject(item) || !Object.hasOwn(item, mergeKey)) {
        return yield* fail(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`)
      }
      const element = item
      const index = out.findIndex((o) => isPlainObject(o) && JSON.stringify(o[mergeKey]) === JSON.stringify(element[mergeKey]))
      if (element["$patch"] === "delete") {
        if (index >= 0) out.splice(index, 1)
      } else if (index >= 0) {
        out[index] = yield* mergeMap(out[index] as JsonObject, element, path, keys)
      } else {
        out.push(withoutDirectives(element))
      }
    }
    return out
  })

export const applyStrategicMergePatch = (
  original: JsonObject,
  patch: unknown,
  keys: MergeKeys
): Result.Result<Record<string, unknown>, StrategicPatchError> => {
  if (!isPlainObject(patch)) return fail("the patch must be a JSON object")
  return mergeMap(original, patch, "", keys)
}
