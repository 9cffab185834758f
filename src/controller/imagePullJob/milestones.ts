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
