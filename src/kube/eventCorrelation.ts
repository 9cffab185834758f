/**
 * What to do with an Event about to be recorded, as client-go's EventCorrelator decides it
 * (tools/record/events_cache.go), so that repeated events cost one PATCH of a count instead of a
 * new Event each, and a component cannot flood the API server about one object:
 * - **Aggregation**: events that differ only by message (same component, object, type and
 *   reason) are counted over a 10-minute window; from the 10th distinct message on, they are
 *   recorded as one Event "(combined from similar events): <latest message>".
 * - **Counting**: an Event identical to one recorded before (the same message, or the same
 *   aggregate) bumps `count` and `lastTimestamp` on the recorded Event by one PATCH.
 * - **Spam filter**: a token bucket per component, object and type: a burst of 25, then one Event
 *   every 5 minutes; what it refuses is not sent (its count still goes to the next one sent).
 * No effects and no clock of its own: the caller passes the time and applies the decision, then
 * says what the API server recorded (`recorded`), as client-go's UpdateState.
 */

/** The parts of an Event the correlator keys on. */
export interface EventFacts {
  readonly component: string
  readonly involved: {
    readonly apiVersion?: string | undefined
    readonly kind?: string | undefined
    readonly namespace?: string | undefined
    readonly name: string
    readonly uid?: string | undefined
  }
  readonly type: string
  readonly reason: string
  readonly message: string
}

/** The decision for one Event. `key` names it for `recorded` once the API server has it. */
export type Correlation =
  /** Refused by the spam filter: nothing is sent. */
  | { readonly _tag: "Skip" }
  /** A new Event with this message (the event's own, or the aggregate's). */
  | { readonly _tag: "Create"; readonly key: string; readonly message: string }
  /** The Event recorded before under this key: its count, lastTimestamp and message patched. */
  | {
      readonly _tag: "Patch"
      readonly key: string
      readonly name: string
      readonly namespace: string
      readonly count: number
      readonly firstTimestamp: string
      readonly message: string
    }

/** An Event as the API server answered it. */
export interface RecordedEvent {
  readonly name: string
  readonly namespace: string
  readonly count: number
  readonly firstTimestamp: string
}

export interface CorrelatorOptions {
  /** Entries each cache keeps (the least recently used go first). */
  readonly cacheSize: number
  /** Distinct messages of similar events within the interval before they are combined. */
  readonly aggregateMaxEvents: number
  readonly aggregateIntervalMillis: number
  /** The spam filter's bucket per component, object and type. */
  readonly spamBurst: number
  readonly spamPerSecond: number
}

/** client-go's defaults (NewEventCorrelator). */
export const defaultCorrelatorOptions: CorrelatorOptions = {
  cacheSize: 4096,
  aggregateMaxEvents: 10,
  aggregateIntervalMillis: 600_000,
  spamBurst: 25,
  spamPerSecond: 1 / 300
}

export const combinedPrefix = "(combined from similar events): "

export interface EventCorrelator {
  /** The decision for an Event at `now` (epoch milliseconds). */
  readonly correlate: (facts: EventFacts, now: number) => Correlation
  /** What the API server recorded for a Create or Patch decision's key. */
  readonly recorded: (key: string, event: RecordedEvent) => void
}

/** A Map used as a least-recently-used cache of at most `size` entries. */
const lruCache = <V>(size: number) => {
  const entries = new Map<string, V>()
  return {
    get: (key: string): V | undefined => {
      const value = entries.get(key)
      if (value !== undefined) {
        entries.delete(key)
        entries.set(key, value)
      }
      return value
    },
    set: (key: string, value: V): void => {
      entries.delete(key)
      entries.set(key, value)
      if (entries.size > size) entries.delete(entries.keys().next().value as string)
    }
  }
}

const objectKey = (facts: EventFacts): string => {
  const o = facts.involved
  return [facts.component, o.kind ?? "", o.namespace ?? "", o.name, o.uid ?? "", o.apiVersion ?? "", facts.type].join("\u0000")
}

interface Aggregate {
  readonly messages: Set<string>
  lastAt: number
}

interface Observation {
  readonly name: string
  readonly namespace: string
  count: number
  readonly firstTimestamp: string
}

interface Bucket {
  tokens: number
  at: number
}

export const makeEventCorrelator = (options: CorrelatorOptions = defaultCorrelatorOptions): EventCorrelator => {
  const aggregates = lruCache<Aggregate>(options.cacheSize)
  const observations = lruCache<Observation>(options.cacheSize)
  const buckets = lruCache<Bucket>(options.cacheSize)

  /** The aggregation step: the key the Event is counted under and the message it goes out with. */
  const aggregate = (facts: EventFacts, now: number): { readonly key: string; readonly message: string } => {
    const similar = `${objectKey(facts)}\u0000${facts.reason}`
    let record = aggregates.get(similar)
    if (record === undefined || now - record.lastAt > options.aggregateIntervalMillis) {
      record = { messages: new Set(), lastAt: now }
    }
    record.messages.add(facts.message)
    record.lastAt = now
    aggregates.set(similar, record)
    if (record.messages.size < options.aggregateMaxEvents) return { key: `${similar}\u0000${facts.message}`, message: facts.message }
    // Kept at the threshold, as client-go's PopAny: every further distinct message stays combined.
    record.messages.delete(record.messages.values().next().value as string)
    return { key: similar, message: `${combinedPrefix}${facts.message}` }
  }

  /** The spam filter: true when the bucket of this component, object and type has a token. */
  const admit = (facts: EventFacts, now: number): boolean => {
    const key = objectKey(facts)
    const bucket = buckets.get(key) ?? { tokens: options.spamBurst, at: now }
    bucket.tokens = Math.min(options.spamBurst, bucket.tokens + ((now - bucket.at) / 1000) * options.spamPerSecond)
    bucket.at = now
    buckets.set(key, bucket)
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }

  const correlate = (facts: EventFacts, now: number): Correlation => {
    const { key, message } = aggregate(facts, now)
    const seen = observations.get(key)
    // Counted before the filter, as client-go does: an occurrence it refuses shows in the next count.
    if (seen !== undefined) seen.count += 1
    if (!admit(facts, now)) return { _tag: "Skip" }
    if (seen === undefined) return { _tag: "Create", key, message }
    return {
      _tag: "Patch",
      key,
      name: seen.name,
      namespace: seen.namespace,
      count: seen.count,
      firstTimestamp: seen.firstTimestamp,
      message
    }
  }

  return {
    correlate,
    recorded: (key, event) => observations.set(key, { ...event })
  }
}
