import { Clock, Duration, Effect, Option, Result } from "effect"
import type { ImageTagStatus } from "../api/nodeImage.ts"
import { CriRuntime, type ImageInfo, type PullProgress, type RegistryAuth } from "../cri/CriRuntime.ts"
import { type CriError, DeadlineExceeded } from "../cri/errors.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import { Metrics, type PullOutcome, pullFailureOf } from "../ops/metrics.ts"
import { attemptPolicy, attemptTimeoutMillis, backoffMillis, timeLeftAfter } from "./attemptPolicy.ts"
import { findImage } from "./imagePresence.ts"
import { pullCredentials } from "./pullCredentials.ts"
import {
  deadlinePassed,
  describePullError,
  failedMessage,
  presentMessage,
  pulledMessage,
  retryingMessage,
  unauthorizedDetail,
  withSecretProblems
} from "./pullMessages.ts"
import type { PullSlots } from "./pullSlots.ts"
import { failedStatus, pullingStatus, succeededStatus, waitingStatus } from "./tagStatus.ts"
import type { TagTask } from "./tagTask.ts"

/** How a worker's pull ended, for Events. */
export interface PullResult {
  readonly succeeded: boolean
  readonly message: string
}

export interface WorkerContext {
  readonly node: string
  readonly secretNamespace: string
  readonly slots: PullSlots
  /** Hands a new status of this tag to the status reporter. */
  readonly report: (status: ImageTagStatus) => Effect.Effect<void>
  /** Called once with the final result (Events). */
  readonly finished: (result: PullResult) => Effect.Effect<void>
}

/** A runtime that overruns the deadline it was given still gets cut off, a little later. */
const deadlineGraceMillis = 5_000

type AttemptResult =
  | { readonly _tag: "Pulled"; readonly imageId: string }
  | {
      readonly _tag: "Failed"
      readonly error: CriError
      readonly credentials: number
      readonly problems: ReadonlyArray<string>
    }

/**
 * The node's image for `reference`, if any: ImageStatus by the reference, then the image list
 * (a runtime may not normalise names the way references do). A runtime that cannot answer means
 * "not known to be present": the pull then says what is wrong.
 */
const presentImage = (reference: string): Effect.Effect<ImageInfo | undefined, never, CriRuntime> =>
  Effect.gen(function* () {
    const cri = yield* CriRuntime
    const status = yield* cri.imageStatus(reference)
    if (Option.isSome(status)) return status.value
    return findImage(reference, yield* cri.listImages)
  }).pipe(
    Effect.catch((error) =>
      Effect.as(
        Effect.logDebug("could not check whether the image is present").pipe(Effect.annotateLogs({ failure: error._tag })),
        undefined
      )
    )
  )

/**
 * One attempt: each matching credential in turn until one is not refused (a 401 moves on to the
 * next), anonymously when none matches, all within `timeoutMillis`.
 */
const attemptPull = (
  task: TagTask,
  context: WorkerContext,
  timeoutMillis: number,
  onProgress: (progress: PullProgress) => Effect.Effect<void>
): Effect.Effect<AttemptResult, never, CriRuntime | KubeApi> =>
  Effect.gen(function* () {
    const cri = yield* CriRuntime
    const { credentials, problems } = yield* pullCredentials(task.reference, task.pullSecrets, context.secretNamespace)
    const auths: ReadonlyArray<RegistryAuth | undefined> = credentials.length === 0 ? [undefined] : credentials
    const started = yield* Clock.currentTimeMillis
    yield* Effect.logDebug("pull attempt").pipe(
      Effect.annotateLogs({ credentials: credentials.length, timeout: `${timeoutMillis / 1000}s` })
    )
    const failed = (error: CriError): AttemptResult => ({ _tag: "Failed", error, credentials: credentials.length, problems })
    for (let i = 0; i < auths.length; i++) {
      const left = timeoutMillis - ((yield* Clock.currentTimeMillis) - started)
      if (left <= 0) return failed(new DeadlineExceeded({ image: task.reference }))
      const auth = auths[i]
      const pulled = yield* cri
        .pullImage({
          image: task.reference,
          timeout: Duration.millis(left),
          onProgress,
          ...(auth === undefined ? {} : { auth }),
          ...(task.sandboxConfig === undefined ? {} : { sandboxConfig: task.sandboxConfig })
        })
        .pipe(
          Effect.timeoutOrElse({
            duration: Duration.millis(left + deadlineGraceMillis),
            orElse: () => Effect.fail(new DeadlineExceeded({ image: task.reference }))
          }),
          Effect.result
        )
      if (Result.isSuccess(pulled)) return { _tag: "Pulled", imageId: pulled.success }
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
 * Pulls one version of one tag to the end (SPEC §3): IfNotPresent succeeds at once when the node
 * has the image; otherwise up to backoffLimit + 1 attempts, each within min(timeout, time left
 * before the deadline), 1 s doubling to 30 s between them, holding one of the node's pull slots
 * only while an attempt runs. Every step is reported; the end is also counted and announced.
 * Interrupting the worker (tag removed, new version) cancels the pull in the runtime.
 */
export const runPullWorker = (task: TagTask, context: WorkerContext): Effect.Effect<void, never, CriRuntime | KubeApi | Metrics> =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const startedAt = yield* Clock.currentTimeMillis

    const finish = (status: ImageTagStatus, outcome: PullOutcome, eventMessage: string) =>
      Effect.gen(function* () {
        const end = yield* Clock.currentTimeMillis
        yield* context.report(status)
        yield* metrics.recordPull(outcome, (end - startedAt) / 1000)
        yield* context.finished({ succeeded: outcome.result === "succeeded", message: eventMessage })
      })

    if (task.imagePullPolicy === "IfNotPresent") {
      const present = yield* presentImage(task.reference)
      if (present !== undefined) {
        const message = presentMessage(task.reference, context.node)
        yield* Effect.logInfo("image already present")
        return yield* finish(
          succeededStatus(task, startedAt, yield* Clock.currentTimeMillis, present.id, message),
          { result: "succeeded", reason: "present" },
          message
        )
      }
    }

    const policy = attemptPolicy(task, startedAt)
    yield* Effect.logInfo("pulling image").pipe(
      Effect.annotateLogs({ policy: task.imagePullPolicy, attempts: policy.attempts, timeout: `${task.timeoutSeconds}s` })
    )
    let progress = 0
    let bytesSeen = 0
    let lastError: string | undefined
    let lastFailure: CriError | undefined
    let problems: ReadonlyArray<string> = []
    let retryNote: string | undefined
    let attempt = 0

    const onProgress = (p: PullProgress): Effect.Effect<void> =>
      Effect.suspend(() => {
        const added = p.bytesDone - bytesSeen
        bytesSeen = Math.max(bytesSeen, p.bytesDone)
        // 100 is for Succeeded: the runtime reports it only as the pull returns.
        const percent = Math.min(99, p.percent)
        const moved = percent > progress
        if (moved) progress = percent
        return Effect.andThen(
          added > 0 ? metrics.addPulledBytes(added) : Effect.void,
          moved ? context.report(pullingStatus(task, startedAt, progress, retryNote)) : Effect.void
        )
      })

    while (attempt < policy.attempts) {
      const timeout = attemptTimeoutMillis(policy, yield* Clock.currentTimeMillis)
      if (timeout <= 0) {
        lastError = lastError === undefined ? deadlinePassed : `${deadlinePassed}; last error: ${lastError}`
        lastFailure = undefined
        break
      }
      attempt++
      progress = 0
      bytesSeen = 0
      retryNote = attempt > 1 ? `attempt ${attempt} of ${policy.attempts}; last error: ${lastError}` : undefined
      const result = yield* context.slots
        .withSlot(
          {
            onWaiting: context.report(waitingStatus(task, startedAt, retryNote)),
            onAcquired: context.report(pullingStatus(task, startedAt, 0, retryNote))
          },
          attemptPull(task, context, timeout, onProgress)
        )
        .pipe(Effect.annotateLogs({ attempt }))
      if (result._tag === "Pulled") {
        const end = yield* Clock.currentTimeMillis
        const message = pulledMessage(task.reference, context.node, end - startedAt)
        yield* Effect.logInfo("pulled image").pipe(Effect.annotateLogs({ imageId: result.imageId, attempts: attempt }))
        return yield* finish(
          succeededStatus(task, startedAt, end, result.imageId, message),
          { result: "succeeded", reason: "pulled" },
          message
        )
      }
      const described = describePullError(result.error, timeout)
      lastError = result.error._tag === "Unauthorized" ? unauthorizedDetail(described, result.credentials) : described
      lastFailure = result.error
      problems = result.problems
      const delay = backoffMillis(attempt)
      const now = yield* Clock.currentTimeMillis
      // Past the deadline (or too close to it for another attempt), that is the reason to report.
      if (!timeLeftAfter(policy, now, attempt >= policy.attempts ? 0 : delay)) {
        lastError = `${deadlinePassed}; last error: ${lastError}`
        lastFailure = undefined
        break
      }
      if (attempt >= policy.attempts) break
      yield* Effect.logWarning("pull attempt failed").pipe(
        Effect.annotateLogs({ attempt, of: policy.attempts, failure: lastError, retryIn: `${delay / 1000}s` })
      )
      yield* context.report(pullingStatus(task, startedAt, progress, retryingMessage(attempt, policy.attempts, lastError, delay)))
      yield* Effect.sleep(Duration.millis(delay))
    }

    const message = withSecretProblems(failedMessage(task.reference, attempt, lastError ?? deadlinePassed), problems)
    yield* Effect.logWarning("pull failed").pipe(Effect.annotateLogs({ attempts: attempt, failure: message }))
    return yield* finish(
      failedStatus(task, startedAt, yield* Clock.currentTimeMillis, progress, message),
      lastFailure === undefined ? { result: "failed", reason: "deadline" } : pullFailureOf(lastFailure),
      `${message} (node ${context.node})`
    )
  }).pipe(Effect.annotateLogs({ node: context.node, image: task.reference, version: task.version }))
