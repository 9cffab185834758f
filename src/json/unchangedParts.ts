// How every store shares a new version's unchanged parts with the previous version (store.ts): what
// readers need of it is that the parts a new version did not change are the previous version's
// objects, so that what was decoded or compared by identity from them stays valid. A store of many
// alike objects (a NodeImage per node) also shares what changed with another object's version.
import { setOwn } from "./plainObject.ts"

type Json = unknown
type JsonRecord = Readonly<Record<string, Json>>

const isRecord = (u: Json): u is JsonRecord => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * `value` with every part equal (as JSON) to the same part of `previous` replaced by that part of
 * `previous`, and `previous` itself when all of it is equal. Neither is changed: a container is
 * copied only where a part of it was replaced. One walk of `value`, comparing as it goes.
 *
 * With a `template` (another object's version), each part that is not equal to `previous`'s is
 * replaced by the same part of `template` where equal to that: 10,000 NodeImages given the same
 * job's tag then hold one tag object between them. `previous` goes first, so what a version did
 * not change stays the previous version's object whatever the template holds. Strings have no
 * identity to compare, and replacing one means writing it into its container: an equal string
 * (the previous version's, else the template's) is written into `value`'s own container in place,
 * unseen by any reader (the same characters). A frozen `value` (the in-process server's objects,
 * which its storage shares already) is compared with `previous` only.
 */
export const keepUnchanged = (value: Json, previous: Json, template?: Json): Json => {
  // Only a string is worth taking from elsewhere (numbers: 0 and -0 are ===, not the same JSON value).
  if (typeof value === "string") return value === previous ? previous : value === template ? template : value
  if (typeof value !== "object" || value === null || value === previous || value === template) return value
  // The in-process server's objects (frozen) are its storage's, shared there already: copying a
  // container to share a member with the template would add a copy, not save one.
  if (template !== undefined && Object.isFrozen(value)) return keepUnchanged(value, previous)
  if (Array.isArray(value)) {
    const before = Array.isArray(previous) ? previous : undefined
    const other = Array.isArray(template) ? template : undefined
    if (before === undefined && other === undefined) return value
    // Strings are written in place only where sharing them with another object is the point.
    const writable = other !== undefined
    let same = before !== undefined && value.length === before.length
    let sameAsOther = other !== undefined && value.length === other.length
    let copy: Array<Json> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = keepUnchanged(value[i], before?.[i], other?.[i])
      if (item !== before?.[i]) same = false
      if (item !== other?.[i]) sameAsOther = false
      if (copy !== undefined) copy[i] = item
      else if (item !== value[i]) (copy = [...value])[i] = item
      else if (writable && typeof item === "string") (value as Array<Json>)[i] = item
    }
    return same ? before : sameAsOther ? other : (copy ?? value)
  }
  const record = value as JsonRecord
  const before = isRecord(previous) ? previous : undefined
  const other = isRecord(template) ? template : undefined
  if (before === undefined && other === undefined) return value
  const writable = other !== undefined
  let same = before !== undefined
  let sameAsOther = other !== undefined
  let members = 0
  let copy: Record<string, Json> | undefined
  for (const key of Object.keys(record)) {
    members++
    const old = before !== undefined && Object.hasOwn(before, key) ? before[key] : undefined
    const alike = other !== undefined && Object.hasOwn(other, key) ? other[key] : undefined
    const item = keepUnchanged(record[key], old, alike)
    if (item !== old || old === undefined) same = false
    if (item !== alike || alike === undefined) sameAsOther = false
    if (copy !== undefined) setOwn(copy, key, item)
    else if (item !== record[key]) setOwn((copy = { ...record }), key, item)
    else if (writable && typeof item === "string") setOwn(record as Record<string, Json>, key, item)
  }
  if (before !== undefined && same && members === Object.keys(before).length) return before
  if (other !== undefined && sameAsOther && members === Object.keys(other).length) return other
  return copy ?? value
}
