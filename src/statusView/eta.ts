/** What the estimate needs from a job: how far it got and since when. */
export interface EtaInput {
  readonly desired: number
  /** Nodes (or child jobs, for a list job) that succeeded or failed. */
  readonly finished: number
  /** When the job started, epoch milliseconds. */
  readonly startTime: number | undefined
  /** Epoch milliseconds. */
  readonly now: number
}

/**
 * Milliseconds until the job is done, at the rate it has finished nodes so far (finished per
 * second since its startTime). A plain average, not a recent-window rate: pulls on a node are
 * not spread evenly, and the whole history is the most stable guess there is. `undefined` when
 * there is nothing to go on yet (nothing finished, or no start time) — a guess would mislead.
 */
export const estimateRemaining = (input: EtaInput): number | undefined => {
  const remaining = input.desired - input.finished
  if (remaining <= 0) return 0
  if (input.startTime === undefined || input.finished <= 0) return undefined
  const elapsed = input.now - input.startTime
  if (elapsed <= 0) return undefined
  const perMilli = input.finished / elapsed
  return Math.ceil(remaining / perMilli)
}
