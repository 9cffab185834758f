import { Cause, Data, Duration, Effect, Random, Schedule } from "effect"
import type { ProviderAnswer } from "../cri/credentialProvider/CredentialProviders.ts"
import type { CriError } from "../cri/errors.ts"
import type { InsufficientDisk } from "./minFreeDisk.ts"
import type { PullStalled } from "./stallClock.ts"
import { deadlinePassed } from "./pullMessages.ts"
import type { TagTask } from "./tagTask.ts"

/** How one tag's attempts are bounded, in Clock milliseconds. */
export interface AttemptPolicy {
  /** backoffLimit + 1. */
  readonly attempts: number
  readonly timeoutMillis: number
  /** activeDeadlineSeconds after createdAt (or after the worker started, for a tag without createdAt). */
  readonly deadlineAt: number | undefined
  /** Throttled attempts (HTTP 429) retried without counting against `attempts`. */
  readonly throttledRetries: number
}

const backoffBaseMillis = 1_000
const backoffCapMillis = 30_000

/**
 * A throttled pull (issue 28, part 3) waits longer than a failed one and is forgiven up to this
 * many times per pull: a rate limit is the registry's state, not the image's fault, and it usually
 * lifts within minutes. Past the bound a throttled attempt counts like any failure; the deadline
 * always wins. 10 retries from 5 s doubling to 5 min span about 25 min at most.
 */
const throttledRetriesPerPull = 10
const throttleBaseMillis = 5_000
const throttleCapMillis = 300_000

export const attemptPolicy = (task: TagTask, startedAt: number): AttemptPolicy => {
  const created = task.createdAt === undefined ? Number.NaN : Date.parse(task.createdAt)
  const origin = Number.isFinite(created) ? created : startedAt
  return {
    attempts: task.backoffLimit + 1,
    timeoutMillis: task.timeoutSeconds * 1000,
    deadlineAt: task.activeDeadlineSeconds === undefined ? undefined : origin + task.activeDeadlineSeconds * 1000,
    throttledRetries: throttledRetriesPerPull
  }
}

/** The time the next attempt may take: min(timeout, time left before the deadline); 0 when none is left. */
export const attemptTimeoutMillis = (policy: AttemptPolicy, now: number): number =>
  Math.max(0, Math.min(policy.timeoutMillis, policy.deadlineAt === undefined ? Infinity : policy.deadlineAt - now))

/** The wait after the n-th failed attempt (n from 1): 1 s doubling, at most 30 s. */
export const backoffMillis = (failedAttempts: number): number =>
  Math.min(backoffCapMillis, backoffBaseMillis * 2 ** Math.max(0, failedAttempts - 1))

/**
 * The wait after the n-th throttled attempt (n from 1): 5 s doubling, at most 5 min, of which the
 * upper half is drawn (`jitter` in [0, 1)) so that nodes throttled together do not come back together.
 */
export const throttleBackoffMillis = (throttled: number, jitter: number): number => {
  const full = Math.min(throttleCapMillis, throttleBaseMillis * 2 ** Math.max(0, throttled - 1))
  return Math.round(full / 2 + (jitter * full) / 2)
}

/** Whether another attempt could start after waiting `delay`: not at or past the deadline. */
export const timeLeftAfter = (policy: AttemptPolicy, now: number, delay: number): boolean =>
  policy.deadlineAt === undefined || now + delay < policy.deadlineAt

/** What ends an attempt without the image: the runtime's error, too little disk to start it, or bytes that stopped coming. */
export type PullError = CriError | InsufficientDisk | PullStalled

/** One attempt that ended without the image. */
export class AttemptFailed extends Data.TaggedError("AttemptFailed")<{
  /** Which attempt, from 1, counting against backoffLimit: a forgiven throttled attempt is tried again under the same number. */
  readonly attempt: number
  /** Throttled attempts of this pull so far, this one included. */
  readonly throttled: number
  readonly failure: PullError
  /** The failure as status messages, events and logs say it. */
  readonly detail: string
  /** Problems with pull secrets and credential providers met on the way (named only if the pull fails). */
  readonly problems: ReadonlyArray<string>
  /** A credential provider failed for the image in this attempt (the Event's reason then says so). */
  readonly providerFailed: boolean
  /** What the credential providers asked in this attempt said: a refusal of theirs is watched for a new answer. */
  readonly providerAnswers: ReadonlyArray<ProviderAnswer>
  /** How far the attempt came. */
  readonly progress: number
}> {}

/** The deadline left no time to start the next attempt; `previous` is the attempt before, if any. */
export class NoTimeLeft extends Data.TaggedError("NoTimeLeft")<{ readonly previous: AttemptFailed | undefined }> {}

export type AttemptError = AttemptFailed | NoTimeLeft

/** Whether a failed attempt is a throttled one within the bound: retried without counting against backoffLimit. */
const forgiven = (policy: AttemptPolicy, failed: AttemptFailed): boolean =>
  failed.failure._tag === "RegistryThrottled" && failed.throttled <= policy.throttledRetries

/** The number of the attempt after `previous`, the first when there is none. */
export const nextAttempt = (policy: AttemptPolicy, previous: AttemptFailed | undefined): number =>
  previous === undefined ? 1 : forgiven(policy, previous) ? previous.attempt : previous.attempt + 1

/** What follows a failed attempt. */
export type AfterFailure =
  /** `forgiven`: a throttled attempt retried without counting against backoffLimit. */
  | { readonly _tag: "Retry"; readonly failed: AttemptFailed; readonly delayMillis: number; readonly forgiven: boolean }
  /** `deadline`: the deadline is the reason to report, whatever the last attempt said. */
  | { readonly _tag: "GiveUp"; readonly deadline: boolean }

/**
 * SPEC §3: another attempt after the backoff while attempts remain and it could still start before
 * the deadline. Past the deadline (or too close to it for another attempt) the deadline is the
 * reason, even when the last attempt was the last allowed. A throttled attempt waits the throttle
 * backoff (`jitter` in [0, 1) draws it), and within the bound is retried whatever attempts remain.
 */
export const afterFailure = (policy: AttemptPolicy, error: AttemptError, now: number, jitter = 0): AfterFailure => {
  if (error._tag === "NoTimeLeft") return { _tag: "GiveUp", deadline: true }
  const throttled = error.failure._tag === "RegistryThrottled"
  const delayMillis = throttled ? throttleBackoffMillis(error.throttled, jitter) : backoffMillis(error.attempt)
  if (forgiven(policy, error)) {
    return timeLeftAfter(policy, now, delayMillis)
      ? { _tag: "Retry", failed: error, delayMillis, forgiven: true }
      : { _tag: "GiveUp", deadline: true }
  }
  const lastAllowed = error.attempt >= policy.attempts
  if (!timeLeftAfter(policy, now, lastAllowed ? 0 : delayMillis)) return { _tag: "GiveUp", deadline: true }
  if (lastAllowed) return { _tag: "GiveUp", deadline: false }
  return { _tag: "Retry", failed: error, delayMillis, forgiven: false }
}

/** The retry schedule of one tag's attempts: `afterFailure` at each failure, waiting its backoff (jitter from Random). */
export const attemptSchedule = (policy: AttemptPolicy): Schedule.Schedule<AfterFailure, AttemptError> =>
  Schedule.fromStepWithMetadata(
    Effect.succeed((meta: Schedule.InputMetadata<AttemptError>) =>
      Effect.flatMap(Random.next, (jitter) => {
        const next = afterFailure(policy, meta.input, meta.now, jitter)
        return next._tag === "Retry"
          ? Effect.succeed([next, Duration.millis(next.delayMillis)] as [AfterFailure, Duration.Duration])
          : Cause.done(next)
      })
    )
  )

/**
 * The failure the running schedule last saw: the previous attempt, none before the first retry.
 * Schedule.CurrentMetadata is untyped; only this module's own errors count.
 */
export const previousFailure: Effect.Effect<AttemptFailed | undefined> = Effect.gen(function* () {
  const meta = yield* Schedule.CurrentMetadata
  return meta.input instanceof AttemptFailed ? meta.input : undefined
})

/** How a pull that gave up ended: attempts made, the last error (or the deadline), progress, secret problems. */
export interface PullFailure {
  readonly _tag: "GaveUp"
  readonly attempts: number
  readonly detail: string
  readonly problems: ReadonlyArray<string>
  readonly providerFailed: boolean
  readonly providerAnswers: ReadonlyArray<ProviderAnswer>
  readonly progress: number
  /** The last attempt's error; undefined when the deadline ended the pull. */
  readonly failure: PullError | undefined
}

export const pullFailure = (error: AttemptError, verdict: AfterFailure): PullFailure => {
  const last = error._tag === "NoTimeLeft" ? error.previous : error
  const deadline = error._tag === "NoTimeLeft" || (verdict._tag === "GiveUp" && verdict.deadline)
  if (last === undefined) {
    return {
      _tag: "GaveUp",
      attempts: 0,
      detail: deadlinePassed,
      problems: [],
      providerFailed: false,
      providerAnswers: [],
      progress: 0,
      failure: undefined
    }
  }
  return {
    _tag: "GaveUp",
    attempts: last.attempt,
    detail: deadline ? `${deadlinePassed}; last error: ${last.detail}` : last.detail,
    problems: last.problems,
    providerFailed: last.providerFailed,
    providerAnswers: last.providerAnswers,
    progress: last.progress,
    failure: deadline ? undefined : last.failure
  }
}
