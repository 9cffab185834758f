import type { CronSchedule } from "../../api/cronSchedule.ts"

/** Upstream's bound on missed start times: past it the controller refuses to guess which to run. */
const maxMissedRuns = 100

export const tooManyMissedMessage = `too many missed start times (> ${maxMissedRuns}). Set or decrease .spec.startingDeadlineSeconds or check clock skew`

export type Runs =
  | { readonly _tag: "Runs"; readonly lastMissed: number | undefined; readonly next: number | undefined }
  | { readonly _tag: "TooManyMissed" }

/**
 * upstream's getNextSchedule: the latest run due since the last scheduled one (or the creation),
 * never before now - startingDeadlineSeconds, and the first run after now. Runs are counted one
 * by one, so a controller down for long (or a skewed clock) stops at maxMissedRuns.
 */
export const dueRuns = (schedule: CronSchedule, since: number, now: number, startingDeadlineSeconds: number | undefined): Runs => {
  const earliest = startingDeadlineSeconds === undefined ? since : Math.max(since, now - startingDeadlineSeconds * 1000)
  const next = schedule.next(now)
  if (earliest > now) return { _tag: "Runs", lastMissed: undefined, next }
  let lastMissed: number | undefined
  let starts = 0
  for (let t = schedule.next(earliest); t !== undefined && t <= now; t = schedule.next(t)) {
    lastMissed = t
    if (++starts > maxMissedRuns) return { _tag: "TooManyMissed" }
  }
  return { _tag: "Runs", lastMissed, next }
}
