// Equality of JSON values, as their texts would compare whatever the order of their keys.

type Json = unknown

const hasToJson = (u: object): boolean => typeof (u as { toJSON?: unknown }).toJSON === "function"

/**
 * Whether `a` and `b` are the same JSON: key order does not matter (an API server returns an
 * object's keys in an order of its own), members that are undefined are absent, as in
 * JSON.stringify. Walked without building the texts: the daemon compares every tag's status on
 * every status write.
 */
export const sameJson = (a: Json, b: Json): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a) === JSON.stringify(b)
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    // JSON.stringify writes an undefined element as null.
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false
    return true
  }
  const left = a as Readonly<Record<string, Json>>
  const right = b as Readonly<Record<string, Json>>
  let members = 0
  for (const key of Object.keys(left)) {
    const value = left[key]
    if (value === undefined) continue
    members++
    if (!Object.hasOwn(right, key) || !sameJson(value, right[key])) return false
  }
  for (const key of Object.keys(right)) if (right[key] !== undefined) members--
  return members === 0
}
