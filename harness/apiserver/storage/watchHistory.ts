import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { maxPooledEntries } from "./valuePool.ts"

export interface HistoryEvent {
  readonly rv: number
  /** The object's key in its kind. */
  readonly key: string
  readonly type: "ADDED" | "MODIFIED" | "DELETED"
  /** The new state; for DELETED the last state, at the deletion's resourceVersion. */
  readonly object: KubeObject
  readonly previous: KubeObject | undefined
  /** `previous` at this event's resourceVersion, made once for the watchers the change filters out. */
  leftFilter?: KubeObject
}

/**
 * About how many bytes of heap a stored version adds to what its previous version holds: the
 * objects and arrays it does not share with `previous` (stores share every unchanged subtree,
 * frozenJson.ts), at 16 bytes a header and 8 an entry (V8's fast properties and elements;
 * strings are pooled or shared and not counted). A record of more than 16 keys (`spec.images`,
 * `status.imageStatuses`) whose keys differ from the previous version's also brings a hidden
 * class of its own, about 88 bytes a key (measured: a 250-key record with a new key set costs
 * 23 KB, with the same keys 2 KB). Walks only what changed, as `intern` did.
 */
export const versionBytes = (value: unknown, previous: unknown): number => {
  if (value === previous || typeof value !== "object" || value === null) return 0
  if (Array.isArray(value)) {
    const before = Array.isArray(previous) ? previous : undefined
    let bytes = 16 + 8 * value.length
    for (let i = 0; i < value.length; i++) bytes += versionBytes(value[i], before?.[i])
    return bytes
  }
  const before =
    typeof previous === "object" && previous !== null && !Array.isArray(previous) ? (previous as Record<string, unknown>) : undefined
  let bytes = 16
  let keys = 0
  let sameKeys = before !== undefined
  for (const key in value) {
    keys++
    const had = before !== undefined && Object.hasOwn(before, key)
    if (!had) sameKeys = false
    bytes += 8 + versionBytes((value as Record<string, unknown>)[key], had ? before[key] : undefined)
  }
  if (keys > maxPooledEntries && !(sameKeys && Object.keys(before!).length === keys)) bytes += 88 * keys
  return bytes
}

/** How many events a kind's history keeps at most, and how many bytes of versions (`versionBytes`). */
export interface HistoryLimits {
  readonly count: number
  readonly bytes: number
}

/**
 * A bounded ring of one kind's events in resourceVersion order, also indexed by object, so that a
 * watch of one object (a daemon's own NodeImage among thousands) reads only that object's events.
 *
 * Bounded by count and by bytes: a NodeImage of 500 images costs about 4 KB a version (its
 * image records), so 10,000 of them were 40 MB of one kind; the byte bound keeps the newest that
 * fit, and a watch that fell behind further gets Gone and lists again (issue 24).
 */
export class EventHistory {
  private readonly events: Array<HistoryEvent | undefined>
  private readonly weights: Float64Array
  private readonly limitBytes: number
  private readonly byKey = new Map<string, Array<HistoryEvent>>()
  private readonly onEvict: (event: HistoryEvent) => void
  private head = 0
  private count = 0
  private bytes = 0
  /** The newest resourceVersion no longer held (0: nothing dropped yet). */
  trimmedUpTo = 0

  constructor(limits: HistoryLimits, onEvict: (event: HistoryEvent) => void) {
    this.events = new Array<HistoryEvent | undefined>(limits.count)
    this.weights = new Float64Array(limits.count)
    this.limitBytes = limits.bytes
    this.onEvict = onEvict
  }

  /** How many events it holds, and their `versionBytes`. */
  get held(): { readonly count: number; readonly bytes: number } {
    return { count: this.count, bytes: this.bytes }
  }

  push(event: HistoryEvent): void {
    const weight = versionBytes(event.object, event.previous)
    // The newest event stays whatever it weighs: a watch must be able to read the change it waits for.
    while (this.count === this.events.length || (this.count > 0 && this.bytes + weight > this.limitBytes)) this.evictOldest()
    const at = (this.head + this.count) % this.events.length
    this.events[at] = event
    this.weights[at] = weight
    this.bytes += weight
    this.count++
    const ofKey = this.byKey.get(event.key)
    if (ofKey === undefined) this.byKey.set(event.key, [event])
    else ofKey.push(event)
  }

  private evictOldest(): void {
    const evicted = this.events[this.head] as HistoryEvent
    this.trimmedUpTo = evicted.rv
    // The oldest event in the ring is also the oldest of its object.
    const ofKey = this.byKey.get(evicted.key)
    ofKey?.shift()
    if (ofKey?.length === 0) this.byKey.delete(evicted.key)
    this.events[this.head] = undefined
    this.bytes -= this.weights[this.head]!
    this.head = (this.head + 1) % this.events.length
    this.count--
    this.onEvict(evicted)
  }

  private at(i: number): HistoryEvent {
    return this.events[(this.head + i) % this.events.length] as HistoryEvent
  }

  /** The events still held after `rv` (of one object, if a key is given). */
  since(rv: number, key: string | undefined): ReadonlyArray<HistoryEvent> {
    if (key !== undefined) {
      const ofKey = this.byKey.get(key) ?? []
      return ofKey.slice(firstAfter(rv, ofKey.length, (i) => ofKey[i] as HistoryEvent))
    }
    const out: Array<HistoryEvent> = []
    for (let i = firstAfter(rv, this.count, (j) => this.at(j)); i < this.count; i++) out.push(this.at(i))
    return out
  }

  /** Whether an event (of one object, if a key is given) after `rv` is held. */
  hasAfter(rv: number, key: string | undefined): boolean {
    if (key === undefined) return this.count > 0 && this.at(this.count - 1).rv > rv
    const ofKey = this.byKey.get(key)
    return ofKey !== undefined && (ofKey[ofKey.length - 1]?.rv ?? 0) > rv
  }

  /** Drops every event; watches that had not read them lose them. */
  clear(upTo: number): void {
    for (let i = 0; i < this.count; i++) this.onEvict(this.at(i))
    this.events.fill(undefined)
    this.byKey.clear()
    this.head = 0
    this.count = 0
    this.bytes = 0
    this.trimmedUpTo = Math.max(this.trimmedUpTo, upTo)
  }
}

// Binary search: the index of the first of `count` events (in resourceVersion order) after `rv`.
const firstAfter = (rv: number, count: number, at: (i: number) => HistoryEvent): number => {
  let low = 0
  let high = count
  while (low < high) {
    const mid = (low + high) >>> 1
    if (at(mid).rv <= rv) low = mid + 1
    else high = mid
  }
  return low
}
