import { Data } from "effect"
import type { PullProgress } from "../cri/CriRuntime.ts"

/**
 * `--pull-progress-timeout` (issue 39): an attempt whose byte count has not moved for that long,
 * while the runtime shows it waiting on the registry, is stalled. `timeoutSeconds` bounds the whole
 * attempt, so a big image on a slow link needs a large one, and a pull that hangs would hold its
 * slot for all of it; this clock bounds only the silence.
 *
 * The clock runs only while the runtime says the pull awaits bytes (PullProgress.awaitingBytes):
 * before the manifest is in (a registry that takes the connection and sends nothing is stalled
 * too) and while a blob is being written. It stops while nothing is awaited, so unpacking after
 * the last byte, however long, is never a stall; it starts again from zero when bytes are awaited
 * again. Runtimes that show no bytes never say so, and are never watched.
 */

/** 2 minutes; `--pull-progress-timeout 0` turns the clock off. */
export const defaultPullProgressTimeoutMillis = 120_000

/** The attempt's bytes did not move for the progress timeout while the runtime awaited some. */
export class PullStalled extends Data.TaggedError("PullStalled")<{
  readonly image: string
  /** How long nothing moved: the progress timeout. */
  readonly stalledMillis: number
  readonly bytesDone: number
  /** 0 while the image's manifest is not in. */
  readonly bytesTotal: number
}> {}

export interface StallClock {
  /** When the clock started: the last move of the bytes, or when the runtime began to await them; undefined while stopped. */
  readonly since: number | undefined
  readonly bytesDone: number
  readonly bytesTotal: number
}

export const stoppedClock: StallClock = { since: undefined, bytesDone: 0, bytesTotal: 0 }

/** The clock after a progress report at `now`: restarted when the bytes moved, stopped when none are awaited. */
export const clockAfter = (clock: StallClock, progress: PullProgress, now: number): StallClock => {
  const moved = progress.bytesDone !== clock.bytesDone || progress.bytesTotal !== clock.bytesTotal
  const since = progress.awaitingBytes !== true ? undefined : moved || clock.since === undefined ? now : clock.since
  return { since, bytesDone: progress.bytesDone, bytesTotal: progress.bytesTotal }
}

export type StallVerdict =
  | { readonly _tag: "Stalled" }
  /** Nothing yet: look again in `afterMillis` (when the clock would run out if nothing moves; a stopped clock, one timeout on). */
  | { readonly _tag: "LookAgain"; readonly afterMillis: number }

export const stallVerdict = (clock: StallClock, now: number, timeoutMillis: number): StallVerdict => {
  if (clock.since === undefined) return { _tag: "LookAgain", afterMillis: timeoutMillis }
  const left = clock.since + timeoutMillis - now
  return left <= 0 ? { _tag: "Stalled" } : { _tag: "LookAgain", afterMillis: left }
}
