// RFC 7386 JSON merge patches, both ways: the controller and the daemon compute the patch of a
// status they changed, and the embedded API server applies the patches clients send.
import { isPlainObject, setOwn } from "./plainObject.ts"

type Json = unknown

const isObject = (u: Json): u is Readonly<Record<string, Json>> => typeof u === "object" && u !== null && !Array.isArray(u)

const hasToJson = (u: object): boolean => typeof (u as { toJSON?: unknown }).toJSON === "function"

/**
 * Whether `a` and `b` are the same JSON: key order does not matter (an API server returns an
 * object's keys in an order of its own), members that are undefined are absent, as in
 * JSON.stringify. Walked without building the texts: the daemon compares every tag's status on
 * every status write.
 */
const equal = (a: Json, b: Json): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a) === JSON.stringify(b)
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    // JSON.stringify writes an undefined element as null.
    for (let i = 0; i < a.length; i++) if (!equal(a[i] ?? null, b[i] ?? null)) return false
    return true
  }
  const left = a as Readonly<Record<string, Json>>
  const right = b as Readonly<Record<string, Json>>
  let members = 0
  for (const key of Object.keys(left)) {
    const value = left[key]
    if (value === undefined) continue
    members++
    if (!Object.hasOwn(right, key) || !equal(value, right[key])) return false
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) members--
  return members === 0
}

/**
 * The RFC 7386 merge patch that turns `before` into `after`: only what changed, `null` for what
 * went. Arrays are replaced whole, as merge patches do. `undefined` when nothing changed.
 */
export const mergePatchBetween = (before: Json, after: Json): Json | undefined => {
  if (!isObject(before) || !isObject(after)) return equal(before, after) ? undefined : (after ?? null)
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
