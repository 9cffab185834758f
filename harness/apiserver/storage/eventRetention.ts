// Events expire. kube-apiserver stores each core/v1 Event with an etcd lease of --event-ttl (1 h
// by default), so Events go away by themselves an hour after they were written; nothing else
// deletes them (they have no owners). The embedded server had no TTL: every Event a controller or
// daemon ever recorded stayed, about 3,000 more for each 500 jobs pulled on 3 nodes (issue 24).
// It also bounds them by count and by size, which kube-apiserver does not: its Events live in
// etcd, ours in the process's memory, and an hour of a large rollout is hundreds of thousands.

export interface EventLimits {
  /** How long an Event is kept after it was created (kube-apiserver's --event-ttl, default 1 h). */
  readonly ttlMs: number
  /** At most this many Events are kept, oldest deleted first (default 10,000). */
  readonly count: number
  /** At most this much Event JSON is kept, oldest deleted first (default 8 MiB, about 10,000 Events of 800 bytes). */
  readonly bytes: number
}

export const defaultEventLimits: EventLimits = { ttlMs: 3_600_000, count: 10_000, bytes: 8 * 1024 * 1024 }

/** An Event as the retention remembers it: which one (its uid, in case the name was reused), when, how large. */
interface Kept {
  readonly key: string
  readonly uid: string
  readonly createdAt: number
  readonly bytes: number
}

/** The stored Events in creation order, and which of them are due for deletion. */
export class EventRetention {
  private readonly limits: EventLimits
  private kept: Array<Kept> = []
  private head = 0
  private bytes = 0

  constructor(limits: EventLimits) {
    this.limits = limits
  }

  /** How many Events it remembers (deleted ones included until they come up), and their bytes. */
  get held(): { readonly count: number; readonly bytes: number } {
    return { count: this.kept.length - this.head, bytes: this.bytes }
  }

  /** An Event was created at `now`; `bytes` is the length of its JSON. */
  added(key: string, uid: string, now: number, bytes: number): void {
    this.kept.push({ key, uid, createdAt: now, bytes })
    this.bytes += bytes
  }

  /**
   * The Events to delete at `now`, oldest first: those older than the TTL, and as many more as
   * it takes to be within the count and the bytes. An Event deleted meanwhile by someone else is
   * still counted until it comes up here: the caller skips those whose key no longer holds that uid.
   */
  due(now: number): ReadonlyArray<{ readonly key: string; readonly uid: string }> {
    const out: Array<{ key: string; uid: string }> = []
    for (;;) {
      const oldest = this.kept[this.head]
      if (oldest === undefined) break
      const held = this.kept.length - this.head
      const expired = now - oldest.createdAt >= this.limits.ttlMs
      if (!expired && held <= this.limits.count && this.bytes <= this.limits.bytes) break
      out.push({ key: oldest.key, uid: oldest.uid })
      this.bytes -= oldest.bytes
      this.head++
    }
    // Drops the consumed front once it is most of the array, so the array stays within twice the count.
    if (this.head > 1024 && this.head * 2 > this.kept.length) {
      this.kept = this.kept.slice(this.head)
      this.head = 0
    }
    return out
  }
}
