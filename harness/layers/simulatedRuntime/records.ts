import type { Duration } from "effect"
import type { PullRequest } from "../../../src/cri/CriRuntime.ts"
import type { CriError } from "../../../src/cri/errors.ts"

// What a simulated runtime keeps of the calls made to it.

export type PullOutcome =
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Succeeded"; readonly imageId: string }
  | { readonly _tag: "Failed"; readonly error: CriError }
  | { readonly _tag: "Cancelled" }

export interface PullRecord {
  readonly image: string
  /** Whether the request carried credentials; the credentials themselves are not kept. */
  readonly authenticated: boolean
  readonly sandboxConfig: PullRequest["sandboxConfig"]
  readonly timeout: Duration.Duration
  /** Clock millis. */
  readonly startedAt: number
  readonly endedAt: number | undefined
  readonly outcome: PullOutcome
}

export interface CallRecord {
  readonly method:
    | "version"
    | "pullImage"
    | "imageStatus"
    | "listImages"
    | "removeImage"
    | "imageFsInfo"
    | "listImageRecords"
    | "setImageLabels"
  readonly image?: string
  readonly at: number
}

/** How many records of each sort a simulated runtime keeps, and about how many bytes of them. */
export interface RecordLimits {
  readonly count: number
  readonly bytes: number
}

/**
 * The newest 10,000 records of each sort, and at most about 4 MiB of them: a simulated node of
 * `preheat dev` or `preheat fleet` runs for days, and kept every call (about 4 for each image it
 * pulled), so its memory grew with every job. Tests look at the few calls they made.
 */
export const defaultRecordLimits: RecordLimits = { count: 10_000, bytes: 4 * 1024 * 1024 }

/** About what one record costs: the object, its fields, and its image reference (two bytes a character at most). */
const recordBytes = (record: { readonly image?: string }): number => 120 + 2 * (record.image?.length ?? 0)

/** Records in the order they were made, oldest dropped first beyond the limits; a record is updated by the number `add` gave it. */
export class RecordLog<A extends { readonly image?: string }> {
  private readonly limits: RecordLimits
  private records: Array<A> = []
  /** How many records were dropped from the front, so that numbers stay valid. */
  private dropped = 0
  private bytes = 0

  constructor(limits: RecordLimits) {
    this.limits = limits
  }

  /** Appends a record; returns its number for `update`. */
  add(record: A): number {
    this.records.push(record)
    this.bytes += recordBytes(record)
    let drop = 0
    while (this.records.length - drop > 1 && (this.records.length - drop > this.limits.count || this.bytes > this.limits.bytes)) {
      this.bytes -= recordBytes(this.records[drop]!)
      drop++
    }
    if (drop > 0) {
      this.records.splice(0, drop)
      this.dropped += drop
    }
    return this.dropped + this.records.length - 1
  }

  /** Replaces a record still held (a pull's outcome once it ends); one already dropped is left dropped. */
  update(number: number, change: (record: A) => A): void {
    const index = number - this.dropped
    const current = this.records[index]
    if (index < 0 || current === undefined) return
    const next = change(current)
    this.bytes += recordBytes(next) - recordBytes(current)
    this.records[index] = next
  }

  all(): ReadonlyArray<A> {
    return [...this.records]
  }
}
