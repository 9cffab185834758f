/** The shares of a job's nodes whose crossing is announced by a Normal event (in percent). */
const milestones = [25, 50, 75, 100] as const

/**
 * The highest milestone the job's succeeded count passed between two reconciles, if any. Per-node
 * success is in the NodeImage status, not in Events (src/daemon/pullEvents.ts): the job says how
 * far it got in four Events at most, whatever its number of nodes.
 */
export const crossedMilestone = (before: number, after: number, desired: number): number | undefined => {
  if (desired === 0) return undefined
  let crossed: number | undefined
  for (const percent of milestones) {
    const threshold = Math.ceil((desired * percent) / 100)
    if (before < threshold && after >= threshold) crossed = percent
  }
  return crossed
}

/**
 * The Progress event's message: the count and its own share, floored, so that it never reads 100%
 * before every node succeeded. The milestone only chooses when it is said: 1 of 3 nodes passes 25%
 * and reads 33%, never "(25%)" beside a count that is not a quarter.
 */
export const progressMessage = (succeeded: number, desired: number): string =>
  `pulled on ${succeeded} of ${desired} nodes (${Math.floor((succeeded * 100) / desired)}%)`
