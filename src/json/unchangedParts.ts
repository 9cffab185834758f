// How every store shares a new version's unchanged parts with the previous version (store.ts): what
// readers need of it is that the parts a new version did not change are the previous version's
// objects, so that what was decoded or compared by identity from them stays valid.
import { setOwn } from "./plainObject.ts"

type Json = unknown

/**
 * `value` with every part equal (as JSON) to the same part of `previous` replaced by that part of
 * `previous`, and `previous` itself when all of it is equal. Neither is changed: a container is
 * copied only where a part of it was replaced. One walk of `value`, comparing as it goes.
 */
export const keepUnchanged = (value: Json, previous: Json): Json => {
  if (value === previous || typeof value !== "object" || value === null || typeof previous !== "object" || previous === null) {
    return value
  }
  if (Array.isArray(value)) {
    if (!Array.isArray(previous)) return value
    let same = value.length === previous.length
    let copy: Array<Json> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = keepUnchanged(value[i], previous[i])
      if (item !== previous[i]) same = false
      if (item !== value[i]) (copy ??= [...value])[i] = item
    }
    return same ? previous : (copy ?? value)
  }
  if (Array.isArray(previous)) return value
  const record = value as Readonly<Record<string, Json>>
  const before = previous as Readonly<Record<string, Json>>
  let same = true
  let members = 0
  let copy: Record<string, Json> | undefined
  for (const key of Object.keys(record)) {
    members++
    const old = Object.hasOwn(before, key) ? before[key] : undefined
    const item = keepUnchanged(record[key], old)
    if (item !== old || old === undefined) same = false
    if (item !== record[key]) setOwn((copy ??= { ...record }), key, item)
  }
  return same && members === Object.keys(before).length ? previous : (copy ?? value)
}
