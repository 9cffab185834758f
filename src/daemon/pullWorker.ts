import { Clock, Duration, Effect, Option, Result, Schedule } from "effect"
import type { ImageTagStatus } from "../api/nodeImage.ts"
import { registryThrottledReason } from "../api/registryThrottle.ts"
import type { CredentialProviders, ProviderAnswer } from "../cri/credentialProvider/CredentialProviders.ts"
import { CriRuntime, type ImageInfo, type PullProgress, type RegistryAuth } from "../cri/CriRuntime.ts"
import { DeadlineExceeded } from "../cri/errors.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import { Metrics, type PullOutcome, pullFailureOf } from "../ops/metrics.ts"
import {
  type AfterFailure,
  AttemptFailed,
  type AttemptError,
  type AttemptPolicy,
  attemptPolicy,
  attemptSchedule,
  attemptTimeoutMillis,
  nextAttempt,
  NoTimeLeft,
  type PullError,
  previousFailure,
  pullFailure
} from "./attemptPolicy.ts"
import { nothingSeen, progressStep } from "./attemptProgress.ts"
import type { DiskCheck } from "./diskCheck.ts"
import { pullCredentials } from "./pullCredentials.ts"
import { digestOf, resolvedDigest } from "./resolvedDigest.ts"
import {
  describePullError,
  failedMessage,
  presentMessage,
  pulledMessage,
  retryingMessage,
  throttledRetryMessage,
  unauthorizedDetail,
  withCredentialProblems
} from "./pullMessages.ts"
import { credentialProviderFailedReason, insufficientDiskReason } from "./pullEvents.ts"
import type { PullSlots } from "./pullSlots.ts"
import { refusedAnswers, withProvidersAsked } from "./providerRenewal/decide.ts"
import { makeStallWatch } from "./stallWatch.ts"
import { failedStatus, pullingStatus, succeededStatus, waitingStatus } from "./tagStatus.ts"
import type { TagTask } from "./tagTask.ts"

/** How a worker's pull ended, for Events (a failure's; src/daemon/pullEvents.ts). */
export interface PullResult {
  readonly succeeded: boolean
  readonly message: string
  /** The Event's reason, when not the usual PullImageFailed. */
  readonly reason?: string
}

export interface WorkerContext {
  readonly node: string
  readonly secretNamespace: string
  readonly slots: PullSlots
  /** `--min-free-disk`, asked before each attempt. */
  readonly disk: DiskCheck
  /** `--pull-progress-timeout`: a pull whose bytes do not move this long while the runtime awaits some fails, PullStalled; 0: off. */
  readonly pullProgressTimeoutMillis: number
  /** `--image-credential-provider-config`'s providers, asked before each attempt; none without the flag. */
  readonly credentialProviders: CredentialProviders["Service"] | undefined
  /** Hands a new status of this tag to the status reporter. */
  readonly report: (status: ImageTagStatus) => Effect.Effect<void>
  /** Called once with the final result (Events). */
  readonly finished: (result: PullResult) => Effect.Effect<void>
  /**
   * The pull failed with these credential providers' answers refused (or failing), after its
   * final status was reported: they are asked again for a new answer (providerRenewal/).
   */
  readonly refused: (status: ImageTagStatus, answers: ReadonlyArray<ProviderAnswer>) => Effect.Effect<void>
}

/** A runtime that overruns the deadline it was given still gets cut off, a little later. */
const deadlineGraceMillis = 5_000

type AttemptResult =
  /** `authenticated`: the registry took credentials (any auth but an anonymous pull): other pods' access is the kubelet's policy's (kubeletImageVerification). */
  | { readonly _tag: "Pulled"; readonly imageId: string; readonly authenticated: boolean }
  | {
      readonly _tag: "Failed"
      readonly error: PullError
      /** The sources of the credentials tried (`pull secret NS/NAME`, `credential provider NAME`); none: anonymously. */
      readonly tried: ReadonlyArray<string>
      readonly problems: ReadonlyArray<string>
      readonly providerFailed: boolean
      readonly providerAnswers: ReadonlyArray<ProviderAnswer>
    }

/** The image is on the node after `attempt` attempts. */
interface Pulled {
  readonly _tag: "Pulled"
  readonly imageId: string
  readonly attempt: number
  readonly authenticated: boolean
}

/**
 * The node's image for `reference`, if any: ImageStatus by the reference, as the kubelet asks
 * before an IfNotPresent pull (GetImageRef); the runtime normalises the name (docker.io, library/,
 * latest). A runtime that cannot answer means "not known to be present": the pull then says what
 * is wrong.
 */
const presentImage = (reference: string): Effect.Effect<ImageInfo | undefined, never, CriRuntime> =>
  Effect.gen(function* () {
    const status = yield* (yield* CriRuntime).imageStatus(reference)
    return Option.getOrUndefined(status)
  }).pipe(
    Effect.catch((error) =>
      Effect.as(
        Effect.logDebug("could not check whether the image is present").pipe(Effect.annotateLogs({ failure: error._tag })),
        undefined
      )
    )
  )

/**
 * One attempt: first the room on the image filesystem (`--min-free-disk`), then each matching
 * credential in turn (pull secrets', then credential providers') until one is not refused (a 401
 * moves on to the next), anonymously when none matches, all within `timeoutMillis`. Each pull is
 * cut short, PullStalled, when its bytes stop moving for `--pull-progress-timeout` (stallClock.ts).
 *
 * Too little room fails the attempt without pulling, and the attempt counts as any other: retried
 * after the backoff within backoffLimit. The check costs one CRI call and a statfs, and the room
 * can come back meanwhile (the kubelet's image GC, a pull elsewhere failing, an operator), while a
 * disk still full after the retries fails the tag, InsufficientDisk, for the job to say so.
 */
const attemptPull = (
  task: TagTask,
  context: WorkerContext,
  timeoutMillis: number,
  onProgress: (progress: PullProgress) => Effect.Effect<void>
): Effect.Effect<AttemptResult, never, CriRuntime | KubeApi> =>
  Effect.gen(function* () {
    const cri = yield* CriRuntime
    const short = yield* context.disk.check
    if (short !== undefined) return { _tag: "Failed", error: short, tried: [], problems: [], providerFailed: false, providerAnswers: [] }
    const { credentials, problems, providerFailed, providerAnswers } = yield* pullCredentials(
      task.reference,
      task.pullSecrets,
      context.secretNamespace,
      context.credentialProviders
    )
    const auths: ReadonlyArray<RegistryAuth | undefined> = credentials.length === 0 ? [undefined] : credentials.map((c) => c.credential)
    const started = yield* Clock.currentTimeMillis
    yield* Effect.logDebug("pull attempt").pipe(
      Effect.annotateLogs({ credentials: credentials.length, timeout: `${timeoutMillis / 1000}s` })
    )
    const tried = [...new Set(credentials.map((c) => c.source))]
    const failed = (error: PullError): AttemptResult => ({ _tag: "Failed", error, tried, problems, providerFailed, providerAnswers })
    for (let i = 0; i < auths.length; i++) {
      const left = timeoutMillis - ((yield* Clock.currentTimeMillis) - started)
      if (left <= 0) return failed(new DeadlineExceeded({ image: task.reference }))
      const auth = auths[i]
      const stall = yield* makeStallWatch(task.reference, context.pullProgressTimeoutMillis)
      const pulled = yield* cri
        .pullImage({
          image: task.reference,
          timeout: Duration.millis(left),
          onProgress: (progress) => Effect.andThen(stall.observe(progress), onProgress(progress)),
          ...(auth === undefined ? {} : { auth }),
          ...(task.sandboxConfig === undefined ? {} : { sandboxConfig: task.sandboxConfig })
        })
        .pipe(
          stall.guard,
          Effect.timeoutOrElse({
            duration: Duration.millis(left + deadlineGraceMillis),
            orElse: () => Effect.fail(new DeadlineExceeded({ image: task.reference }))
          }),
          Effect.result
        )
      if (Result.isSuccess(pulled)) return { _tag: "Pulled", imageId: pulled.success, authenticated: auth !== undefined }
      if (pulled.failure._tag === "Unauthorized" && i < auths.length - 1) {
        yield* Effect.logDebug("registry refused a credential; trying the next").pipe(
          Effect.annotateLogs({ credential: `${i + 1} of ${auths.length}` })
        )
        continue
      }
      return failed(pulled.failure)
    }
    return failed(new DeadlineExceeded({ image: task.reference }))
  })

/**
 * The next attempt of the running schedule: its number and the note on it follow from the previous
 * failure. It reports Waiting or Pulling as it gets a slot, and progress as the runtime reports it.
 */
const runAttempt = Effect.fn("PullWorker.attempt")(function* (
  task: TagTask,
  context: WorkerContext,
  policy: AttemptPolicy,
  startedAt: number
): Effect.fn.Return<Pulled, AttemptError, CriRuntime | KubeApi | Metrics> {
  const metrics = yield* Metrics
  const previous = yield* previousFailure
  const attempt = nextAttempt(policy, previous)
  const timeout = attemptTimeoutMillis(policy, yield* Clock.currentTimeMillis)
  if (timeout <= 0) return yield* new NoTimeLeft({ previous })
  const note = previous === undefined ? undefined : `attempt ${attempt} of ${policy.attempts}; last error: ${previous.detail}`
  // This attempt's own: the runtime reports its progress one report at a time, each step taken whole.
  let seen = nothingSeen
  const onProgress = (progress: PullProgress): Effect.Effect<void> =>
    Effect.suspend(() => {
      const step = progressStep(seen, progress)
      seen = step.seen
      const report = step.moved ? context.report(pullingStatus(task, startedAt, step.seen.percent, note)) : Effect.void
      return step.addedBytes > 0 ? Effect.andThen(metrics.addPulledBytes(step.addedBytes), report) : report
    })
  const result = yield* context.slots
    .withSlot(
      {
        onWaiting: context.report(waitingStatus(task, startedAt, note)),
        onAcquired: context.report(pullingStatus(task, startedAt, 0, note))
      },
      attemptPull(task, context, timeout, onProgress)
    )
    .pipe(Effect.annotateLogs({ attempt }))
  if (result._tag === "Pulled") return { _tag: "Pulled", imageId: result.imageId, attempt, authenticated: result.authenticated }
  const described = describePullError(result.error, timeout)
  return yield* new AttemptFailed({
    attempt,
    throttled: (previous?.throttled ?? 0) + (result.error._tag === "RegistryThrottled" ? 1 : 0),
    failure: result.error,
    detail: result.error._tag === "Unauthorized" ? unauthorizedDetail(described, result.tried) : described,
    problems: result.problems,
    providerFailed: result.providerFailed,
    providerAnswers: result.providerAnswers,
    progress: seen.percent
  })
})

/** The Event reason of a failure that has its own (otherwise PullImageFailed). */
const eventReasonOf = (failure: PullError | undefined, providerFailed: boolean): string | undefined => {
  if (failure?._tag === "Unauthorized" && providerFailed) return credentialProviderFailedReason
  if (failure?._tag === "InsufficientDisk") return insufficientDiskReason
  if (failure?._tag === "RegistryThrottled") return registryThrottledReason
  return undefined
}

/**
 * Pulls one version of one tag to the end (SPEC §3): IfNotPresent succeeds at once when the node
 * has the image; otherwise up to backoffLimit + 1 attempts, each within min(timeout, time left
 * before the deadline), 1 s doubling to 30 s between them (`attemptSchedule`; a throttled attempt
 * waits 5 s doubling to 5 min with jitter, and up to a bound does not count), holding one of the
 * node's pull slots only while an attempt runs. Every step is reported; the end is also counted
 * and announced. Interrupting the worker (tag removed, new version) cancels the pull in the runtime.
 */
export const runPullWorker = (task: TagTask, context: WorkerContext): Effect.Effect<void, never, CriRuntime | KubeApi | Metrics> =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const startedAt = yield* Clock.currentTimeMillis

    const finish = (status: ImageTagStatus, outcome: PullOutcome, eventMessage: string, reason?: string) =>
      Effect.gen(function* () {
        const end = yield* Clock.currentTimeMillis
        yield* context.report(status)
        yield* metrics.recordPull(outcome, (end - startedAt) / 1000)
        yield* context.finished({
          succeeded: outcome.result === "succeeded",
          message: eventMessage,
          ...(reason === undefined ? {} : { reason })
        })
      })

    if (task.imagePullPolicy === "IfNotPresent") {
      const present = yield* presentImage(task.reference)
      if (present !== undefined) {
        const message = presentMessage(task.reference, context.node)
        yield* Effect.logInfo("image already present")
        return yield* finish(
          succeededStatus(task, startedAt, yield* Clock.currentTimeMillis, present.id, message, digestOf(task.reference, present)),
          { result: "succeeded", reason: "present" },
          message
        )
      }
    }

    const policy = attemptPolicy(task, startedAt)
    yield* Effect.logInfo("pulling image").pipe(
      Effect.annotateLogs({ policy: task.imagePullPolicy, attempts: policy.attempts, timeout: `${task.timeoutSeconds}s` })
    )

    /**
     * Said before the backoff's wait: in the log and in the tag's status. A forgiven throttled
     * attempt's status leads with RegistryThrottled, which the controller reads (api/registryThrottle.ts).
     */
    const announceRetry = (next: AfterFailure) => {
      if (next._tag !== "Retry") return Effect.void
      const { failed, delayMillis } = next
      const message = next.forgiven
        ? throttledRetryMessage(failed.throttled, policy.throttledRetries, failed.detail, delayMillis)
        : retryingMessage(failed.attempt, policy.attempts, failed.detail, delayMillis)
      return Effect.andThen(
        Effect.logWarning(next.forgiven ? "registry throttled the pull" : "pull attempt failed").pipe(
          Effect.annotateLogs({
            attempt: failed.attempt,
            of: policy.attempts,
            throttled: failed.throttled,
            failure: failed.detail,
            retryIn: `${delayMillis / 1000}s`
          })
        ),
        context.report(pullingStatus(task, startedAt, failed.progress, message))
      )
    }

    const outcome = yield* runAttempt(task, context, policy, startedAt).pipe(
      Effect.retryOrElse(attemptSchedule(policy).pipe(Schedule.tap(({ output }) => announceRetry(output))), (error, verdict) =>
        Effect.succeed(pullFailure(error, verdict))
      )
    )

    if (outcome._tag === "Pulled") {
      const end = yield* Clock.currentTimeMillis
      const message = pulledMessage(task.reference, context.node, end - startedAt)
      yield* Effect.logInfo("pulled image").pipe(Effect.annotateLogs({ imageId: outcome.imageId, attempts: outcome.attempt }))
      const digest = yield* resolvedDigest(task.reference, outcome.imageId)
      return yield* finish(
        succeededStatus(task, startedAt, end, outcome.imageId, message, digest, outcome.authenticated),
        { result: "succeeded", reason: "pulled" },
        message
      )
    }
    const message = withCredentialProblems(failedMessage(task.reference, outcome.attempts, outcome.detail), outcome.problems)
    yield* Effect.logWarning("pull failed").pipe(Effect.annotateLogs({ attempts: outcome.attempts, failure: message }))
    const refused = refusedAnswers(outcome.failure, outcome.providerFailed, outcome.providerAnswers)
    const status = withProvidersAsked(failedStatus(task, startedAt, yield* Clock.currentTimeMillis, outcome.progress, message), refused)
    yield* finish(
      status,
      outcome.failure === undefined ? { result: "failed", reason: "deadline" } : pullFailureOf(outcome.failure),
      `${message} (node ${context.node})`,
      eventReasonOf(outcome.failure, outcome.providerFailed)
    )
    if (refused.length > 0) yield* context.refused(status, refused)
  }).pipe(
    Effect.annotateLogs({ node: context.node, image: task.reference, version: task.version }),
    Effect.withSpan("PullWorker.pull", { attributes: { node: context.node, image: task.reference, version: task.version } })
  )
