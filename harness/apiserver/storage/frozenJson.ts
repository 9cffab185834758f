// Stored objects are deeply frozen JSON and handed as they are to every reader and watcher; a
// write shares the unchanged subtrees of the previous version, so that keeping a bounded watch
// history costs only what changed.
import { isPlainObject, setOwn } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { maxPooledEntries, recordOf, ValuePool } from "./valuePool.ts"

/**
 * One pool for the process, on purpose: pooled values are frozen, so every API server's storage in
 * the process may share them (one outside tests; the clients' stores share with an object's
 * previous version only, src/kube/store.ts). What it holds is not observable: `intern` returns
 * equal values either way. Listed as process-wide on purpose in test/architecture/moduleState.test.ts.
 */
const pool = new ValuePool()

const settled = <A extends object>(value: A): A => pool.settle(Object.freeze(value))

/** Whether `value` is deeply frozen JSON that came out of `intern`. */
const isInterned = (value: object): boolean => pool.settled(value)

/** A value that cannot be stored as JSON, with where it was found. */
export class NotJson {
  readonly path: string
  readonly reason: string
  constructor(path: string, reason: string) {
    this.path = path
    this.reason = reason
  }
}

const maxDepth = 256

/**
 * `value` as deeply frozen JSON, reusing `previous` (and its subtrees) wherever they are equal, so
 * that an unchanged write returns `previous` itself. Keys whose value is undefined are dropped and
 * toJSON is honoured, as JSON.stringify does; anything else that is not JSON throws NotJson.
 *
 * `previous` is always stored data, so anything reachable from it is already deeply frozen: a
 * value found there (same place, or for arrays any element) is taken as is. Everything else is
 * walked, which costs no allocation where it turns out equal. Small values come out of the pool:
 * equal ones written anywhere are one object.
 */
export const intern = (value: unknown, previous: unknown, path = "", depth = 0): unknown => {
  // An unchanged string is the pooled one already: comparing costs less than pooling it again.
  if (typeof value !== "object") return value === previous ? previous : internPrimitive(value, path)
  if (value === null || value === previous || isInterned(value)) return value
  if (depth > maxDepth) throw new NotJson(path, `nested deeper than ${maxDepth} levels`)
  // Most of a new version is the old one: an equal subtree is found without copying anything.
  if (typeof previous === "object" && previous !== null && equalsStored(value, previous, depth)) return previous
  if (Array.isArray(value)) return internArray(value, Array.isArray(previous) ? previous : undefined, path, depth)
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === "function") return intern(toJSON.call(value), previous, path, depth + 1)
  if (!isPlainObject(value)) throw new NotJson(path, `a ${(value as object).constructor?.name ?? "non-plain object"} is not JSON`)
  const prev = isPlainObject(previous) ? previous : undefined
  const entries: Array<readonly [string, unknown]> = []
  let same = prev !== undefined
  for (const key of Object.keys(value)) {
    const raw = value[key]
    if (raw === undefined) continue
    const before = prev !== undefined && Object.hasOwn(prev, key) ? prev[key] : undefined
    const item = intern(raw, before, path === "" ? key : `${path}.${key}`, depth + 1)
    entries.push([key, item])
    if (same && (item !== before || before === undefined)) same = false
  }
  if (same && prev !== undefined && Object.keys(prev).length === entries.length) return prev
  if (entries.length > maxPooledEntries) return settled(recordOf(entries))
  const out: Record<string, unknown> = {}
  for (const [key, item] of entries) setOwn(out, key, item)
  return settled(out)
}

/**
 * Whether `value` is, as JSON, the stored `stored` (whose key order does not matter, as for
 * intern). Only plain JSON compares equal; anything else (undefined members, toJSON) is left to
 * intern's walk.
 */
const equalsStored = (value: unknown, stored: unknown, depth: number): boolean => {
  if (value === stored) return true
  if (typeof value !== "object" || value === null || typeof stored !== "object" || stored === null || depth > maxDepth) {
    return false
  }
  if (Array.isArray(value)) {
    if (!Array.isArray(stored) || value.length !== stored.length) return false
    for (let i = 0; i < value.length; i++) if (!equalsStored(value[i], stored[i], depth + 1)) return false
    return true
  }
  if (Array.isArray(stored) || !isPlainObject(value)) return false
  const record = value as JsonObject
  const target = stored as JsonObject
  const keys = Object.keys(record)
  if (keys.length !== Object.keys(target).length) return false
  for (const key of keys) {
    if (!Object.hasOwn(target, key) || !equalsStored(record[key], target[key], depth + 1)) return false
  }
  return true
}

const internPrimitive = (value: unknown, path: string): unknown => {
  if (typeof value === "string") return pool.string(value)
  if (typeof value === "boolean") return value
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new NotJson(path, `${value} is not a JSON number`)
    return value
  }
  throw new NotJson(path, `a ${typeof value} is not JSON`)
}

// Elements moved within the array (an insertion, a removal) are still found in `prev` and reused.
const internArray = (value: ReadonlyArray<unknown>, prev: ReadonlyArray<unknown> | undefined, path: string, depth: number) => {
  let same = prev !== undefined && prev.length === value.length
  let known: Set<unknown> | undefined
  const out = new Array<unknown>(value.length)
  for (let i = 0; i < value.length; i++) {
    const raw = value[i] === undefined ? null : value[i]
    let item: unknown
    if (prev !== undefined && raw !== prev[i] && typeof raw === "object" && raw !== null) {
      known ??= new Set(prev)
      item = known.has(raw) ? raw : intern(raw, prev[i], `${path}[${i}]`, depth + 1)
    } else {
      item = intern(raw, prev?.[i], `${path}[${i}]`, depth + 1)
    }
    out[i] = item
    if (same && item !== prev?.[i]) same = false
  }
  return same ? prev : settled(out)
}

/** A copy of a stored object with some metadata fields replaced (undefined removes one). */
export const withMetadata = (object: KubeObject, changes: JsonObject): KubeObject => {
  const metadata: Record<string, unknown> = { ...object.metadata }
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete metadata[key]
    else metadata[key] = intern(value, undefined, `metadata.${key}`, 1)
  }
  return settled({ ...object, metadata: settled(metadata) }) as KubeObject
}
