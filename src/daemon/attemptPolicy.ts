import type { TagTask } from "./tagTask.ts"

/** How one tag's attempts are bounded, in Clock milliseconds. */
export interface AttemptPolicy {
  /** backoffLimit + 1. */
  readonly attempts: number
  readonly timeoutMillis: number
  /** activeDeadlineSeconds after createdAt (or after the worker started, for a tag without createdAt). */
  readonly deadlineAt: number | undefined
}

export const backoffBaseMillis = 1_000
export const backoffCapMillis = 30_000

export const attemptPolicy = (task: TagTask, startedAt: number): AttemptPolicy => {
  const created = task.createdAt === undefined ? Number.NaN : Date.parse(task.createdAt)
  const origin = Number.isFinite(created) ? created : startedAt
  return {
    attempts: task.backoffLimit + 1,
    timeoutMillis: task.timeoutSeconds * 1000,
    deadlineAt: task.activeDeadlineSeconds === undefined ? undefined : origin + task.activeDeadlineSeconds * 1000
  }
}

/** The time the next attempt may take: min(timeout, time left before the deadline); 0 when none is left. */
export const attemptTimeoutMillis = (policy: AttemptPolicy, now: number): number =>
  Math.max(0, Math.min(policy.timeoutMillis, policy.deadlineAt === undefined ? Infinity : policy.deadlineAt - now))

/** The wait after the n-th failed attempt (n from 1): 1 s doubling, at most 30 s. */
export const backoffMillis = (failedAttempts: number): number =>
  Math.min(backoffCapMillis, backoffBaseMillis * 2 ** Math.max(0, failedAttempts - 1))

/** Whether another attempt could start after waiting `delay`: not at or past the deadline. */
export const timeLeftAfter = (policy: AttemptPolicy, now: number, delay: number): boolean =>
  policy.deadlineAt === undefined || now + delay < policy.deadlineAt
