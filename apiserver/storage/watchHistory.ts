import type { KubeObject } from "../../src/kube/KubeApi.ts"

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
 * A bounded ring of one kind's events in resourceVersion order, also indexed by object, so that a
 * watch of one object (a daemon's own NodeImage among thousands) reads only that object's events.
 */
export class EventHistory {
  private readonly events: Array<HistoryEvent | undefined>
  private readonly byKey = new Map<string, Array<HistoryEvent>>()
  private readonly onEvict: (event: HistoryEvent) => void
  private head = 0
  private count = 0
  /** The newest resourceVersion no longer held (0: nothing dropped yet). */
  trimmedUpTo = 0

  constructor(limit: number, onEvict: (event: HistoryEvent) => void) {
    this.events = new Array<HistoryEvent | undefined>(limit)
    this.onEvict = onEvict
  }

  push(event: HistoryEvent): void {
    const limit = this.events.length
    if (this.count === limit) {
      const evicted = this.events[this.head]
      if (evicted !== undefined) {
        this.trimmedUpTo = evicted.rv
        // The oldest event in the ring is also the oldest of its object.
        const ofKey = this.byKey.get(evicted.key)
        ofKey?.shift()
        if (ofKey?.length === 0) this.byKey.delete(evicted.key)
        this.onEvict(evicted)
      }
      this.events[this.head] = event
      this.head = (this.head + 1) % limit
    } else {
      this.events[(this.head + this.count) % limit] = event
      this.count++
    }
    const ofKey = this.byKey.get(event.key)
    if (ofKey === undefined) this.byKey.set(event.key, [event])
    else ofKey.push(event)
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
