// What a store of many alike objects (a NodeImage per node) compares a version's changed parts with,
// so that parts equal across objects are held once (store.ts, json/unchangedParts.ts).
import { isPlainObject, setOwn } from "../json/plainObject.ts"
import type { JsonObject } from "../json/plainObject.ts"
import { sameJson } from "../json/sameJson.ts"
import type { KubeObject } from "./KubeApi.ts"

export interface AlikeObjects {
  /** Parts of the objects stored last, laid out as `incoming` is, for its changed parts to be compared with. */
  readonly template: (incoming: KubeObject) => unknown
  /**
   * A version as the store is to hold it (its unchanged parts the previous version's): each
   * changed member of a record named by name that equals one stored recently is replaced by that
   * one, and its parts are what the next versions are compared with.
   */
  readonly took: (held: KubeObject, previous: KubeObject | undefined) => KubeObject
}

/**
 * A record's members by name: for each name, the last few distinct members stored under it, most
 * recent first; the names stored least recently are forgotten past `names`.
 */
class RecentMembers {
  private readonly byName = new Map<string, Array<unknown>>()
  private readonly names: number
  private readonly perName: number

  constructor(names: number, perName: number) {
    this.names = names
    this.perName = perName
  }

  /** The member stored last under each of `record`'s names. */
  latest(record: JsonObject): JsonObject {
    const like: Record<string, unknown> = {}
    for (const key of Object.keys(record)) {
      const member = this.byName.get(key)?.[0]
      if (member !== undefined) setOwn(like, key, member)
    }
    return like
  }

  /**
   * `record` with each member that is not `before`'s and equals one stored under its name replaced
   * by that one (the same object when nothing was replaced); its members remembered.
   */
  took(record: JsonObject, before: JsonObject | undefined): JsonObject {
    // The in-process server's objects (frozen) are shared by its storage already: remembered, not replaced.
    const replaces = !Object.isFrozen(record)
    let copy: Record<string, unknown> | undefined
    for (const key of Object.keys(record)) {
      const member = record[key]
      const recent = this.byName.get(key) ?? []
      this.byName.delete(key)
      this.byName.set(key, recent)
      if (before !== undefined && Object.hasOwn(before, key) && before[key] === member) continue
      const at = recent.indexOf(member)
      const equal = at >= 0 || !replaces ? at : recent.findIndex((r) => sameJson(r, member))
      const kept = equal >= 0 ? recent[equal] : member
      if (equal >= 0) recent.splice(equal, 1)
      recent.unshift(kept)
      if (recent.length > this.perName) recent.pop()
      if (kept !== member) setOwn((copy ??= { ...record }), key, kept)
    }
    for (const oldest of this.byName.keys()) {
      if (this.byName.size <= this.names) break
      this.byName.delete(oldest)
    }
    return copy ?? record
  }
}

const at = (object: unknown, path: ReadonlyArray<string>): unknown => {
  let value = object
  for (const key of path) value = isPlainObject(value) && Object.hasOwn(value, key) ? value[key] : undefined
  return value
}

/** `object` with `value` at `path`: the containers on the way copied, none changed. */
const withAt = (object: JsonObject, path: ReadonlyArray<string>, value: unknown): JsonObject => {
  const [key, ...rest] = path
  if (key === undefined) return object
  const copy: Record<string, unknown> = { ...object }
  const inner = Object.hasOwn(object, key) ? object[key] : undefined
  setOwn(copy, key, rest.length === 0 ? value : withAt(isPlainObject(inner) ? inner : {}, rest, value))
  return copy
}

/**
 * The object stored last, and under each of `recordsAt` (paths to records keyed by names that
 * recur across objects: a NodeImage's images) the members stored recently under each name by any
 * object. In a NodeImage store the object stored last is mostly another job's news, so the image
 * an incoming version changed is compared with that image as the nodes that had it last hold it
 * (the same job's tag, written in the same second, one of the few TTLs its jitter gives; the same
 * outcome). Bounded: `perName` members for each of at most `names` names per record, the names
 * stored least recently forgotten first.
 */
export const alikeObjects = (recordsAt: ReadonlyArray<ReadonlyArray<string>> = [], names = 1024, perName = 8): AlikeObjects => {
  let last: KubeObject | undefined
  const recent = recordsAt.map(() => new RecentMembers(names, perName))
  return {
    template: (incoming) => {
      if (last === undefined) return undefined
      let template: JsonObject = last
      recordsAt.forEach((path, i) => {
        const record = at(incoming, path)
        if (isPlainObject(record)) template = withAt(template, path, recent[i]!.latest(record))
      })
      return template
    },
    took: (held, previous) => {
      let kept: JsonObject = held
      recordsAt.forEach((path, i) => {
        const record = at(kept, path)
        if (!isPlainObject(record)) return
        const before = at(previous, path)
        const shared = recent[i]!.took(record, isPlainObject(before) ? before : undefined)
        if (shared !== record) kept = withAt(kept, path, shared)
      })
      last = kept as KubeObject
      return last
    }
  }
}
