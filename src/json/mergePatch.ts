// RFC 7386 JSON merge patches, both ways: the controller and the daemon compute the patch of a
// status they changed, and the embedded API server applies the patches clients send.
import { isPlainObject, setOwn } from "./plainObject.ts"
import { sameJson } from "./sameJson.ts"

type Json = unknown

const isObject = (u: Json): u is Readonly<Record<string, Json>> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The RFC 7386 merge patch that turns `before` into `after`: only what changed, `null` for what
 * went. Arrays are replaced whole, as merge patches do. `undefined` when nothing changed.
 */
export const mergePatchBetween = (before: Json, after: Json): Json | undefined => {
  if (!isObject(before) || !isObject(after)) return sameJson(before, after) ? undefined : (after ?? null)
  const patch: Record<string, Json> = {}
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key) || after[key] === undefined) patch[key] = null
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue
    const child = Object.hasOwn(before, key) ? mergePatchBetween(before[key], value) : value
    if (child !== undefined) patch[key] = child
  }
  return Object.keys(patch).length === 0 ? undefined : patch
}

/** RFC 7386 applied: objects merge key by key, null deletes, anything else replaces. Shares `target`'s subtrees. */
export const applyMergePatch = (target: Json, patch: Json): Json => {
  if (!isPlainObject(patch)) return patch
  const base = isPlainObject(target) ? target : {}
  const out: Record<string, Json> = { ...base }
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (value === undefined) continue
    if (value === null) delete out[key]
    else setOwn(out, key, applyMergePatch(Object.hasOwn(base, key) ? base[key] : undefined, value))
  }
  return out
}
