// When a worker's report of its tag is written (SPEC §6.6): the daemon's status write cadence,
// shared with the simulated daemons of the controller's tests and benchmarks. Pure.
import { Duration } from "effect"
import type { ImageTagStatus } from "../api/nodeImage.ts"
import type { DaemonOptions } from "./options.ts"

/** Milliseconds: progress at most every `progressInterval`; a start shown `startDelay` in; an outcome kept up to `outcomeDelay`. */
export interface StatusCadence {
  readonly progressInterval: number
  readonly startDelay: number
  readonly outcomeDelay: number
}

/** The cadence the daemon's options set. */
export const statusCadence = (
  options: Pick<DaemonOptions, "progressWriteInterval" | "pullingWriteDelay" | "outcomeWriteDelay">
): StatusCadence => {
  const millis = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))
  return {
    progressInterval: millis(options.progressWriteInterval),
    startDelay: millis(options.pullingWriteDelay),
    outcomeDelay: millis(options.outcomeWriteDelay)
  }
}

export interface ReportTiming {
  readonly now: number
  /** When the node's status was last written. */
  readonly lastWriteAt: number
  /** Whether the report's phase or version differs from the tag's previous report. */
  readonly changed: boolean
  /** When the pull started, while its Pulling has not been written; else undefined. */
  readonly unwrittenStart: number | undefined
  /** Whether another tag of the node is still to finish (Waiting or Pulling). */
  readonly othersRunning: boolean
}

/** The tag's pull ended. */
export const isOutcome = (phase: ImageTagStatus["phase"]): boolean => phase === "Succeeded" || phase === "Failed"

/**
 * When the write carrying a report falls due (epoch ms); each write carries every report, so the
 * earliest due of all wins. A pull's Pulling waits for the start delay (a pull that ends before it
 * writes only its outcome) and progress for the interval; an outcome goes at once, unless another
 * pull of the node is still running: then it waits for that one's outcome, up to `outcomeDelay`,
 * so that tags finishing close together (the tasks of jobs that arrived together) are reported in
 * one write and their jobs read them at the same moment (issue 40). Any other phase change
 * (Waiting, a tag gone) goes at once.
 */
export const reportDue = (cadence: StatusCadence, phase: ImageTagStatus["phase"], timing: ReportTiming): number => {
  const { now, lastWriteAt, changed, unwrittenStart, othersRunning } = timing
  if (phase === "Pulling") {
    const shown = unwrittenStart === undefined ? now : unwrittenStart + cadence.startDelay
    return Math.max(lastWriteAt + cadence.progressInterval, shown)
  }
  if (!changed) return lastWriteAt + cadence.progressInterval
  return isOutcome(phase) && othersRunning ? now + cadence.outcomeDelay : now
}
