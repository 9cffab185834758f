import { Cause, Clock, Duration, Effect, Exit, Option } from "effect"
import type { ItemRateLimiter } from "./itemRateLimiter.ts"
import type { ReconcileError } from "./ReconcileError.ts"
import type { WorkQueue } from "./Scheduler.ts"

/** What a successful reconcile asks for next (controller-runtime's Result). */
export interface Outcome {
  /** Reconcile the key again after this long, e.g. when a TTL or deadline falls due. */
  readonly requeueAfter?: Duration.Input
}

/** Reconciles one key: what to do next on success; a typed failure says whether to retry. */
export type Reconcile<R> = (key: string) => Effect.Effect<Outcome, ReconcileError, R>

export type ReconcileResult = "success" | "error" | "requeue"

/**
 * Hooks for metrics: reconcile duration and result per key. Queue depth is the queue's `size`;
 * the wait from due to taken is seen by the queue itself (QueueObserver in layers/scheduler.ts),
 * since only the queue knows when a key fell due. Hooks run on the worker, so they must be cheap.
 */
export interface WorkerObserver {
  readonly onStarted?: (key: string) => Effect.Effect<void>
  readonly onFinished?: (key: string, durationMillis: number, result: ReconcileResult) => Effect.Effect<void>
}

export interface RunWorkersOptions<R> {
  /** Keys reconciled at once; each key is only ever with one worker. */
  readonly concurrency: number
  readonly reconcile: Reconcile<R>
  readonly rateLimiter: ItemRateLimiter
  readonly observe?: WorkerObserver
}

/**
 * Feeds keys from queue to reconcile with at most `concurrency` in flight, forever (until
 * interrupted). Success forgets the key's failures and honours requeueAfter; a retryable failure
 * (or a defect, so one bad object cannot stop every controller) is logged and retried after the
 * key's rate-limited delay; a TerminalError is logged once and its failures forgotten, not retried.
 * `done` is always called, also when the workers are interrupted mid-reconcile; the key is then
 * re-added so a queue that outlives its workers (leadership lost and regained) still has it.
 */
export const runWorkers = <R>(queue: WorkQueue, options: RunWorkersOptions<R>): Effect.Effect<never, never, R> =>
  Effect.gen(function* () {
    const clock = yield* Clock.Clock
    const { observe, rateLimiter, reconcile } = options

    const settle = (key: string, exit: Exit.Exit<Outcome, ReconcileError>): Effect.Effect<ReconcileResult | undefined> => {
      if (Exit.isSuccess(exit)) {
        const after = exit.value.requeueAfter
        return rateLimiter
          .forget(key)
          .pipe(
            Effect.andThen(after === undefined ? Effect.succeed("success" as const) : Effect.as(queue.add(key, after), "requeue" as const))
          )
      }
      if (Cause.hasInterruptsOnly(exit.cause)) return Effect.as(queue.add(key), undefined)
      // Logged as the reconcile's own error, not its wrapper.
      const cause = Cause.map(exit.cause, (error) => error.cause)
      const failure = Cause.findErrorOption(exit.cause)
      if (Option.isSome(failure) && failure.value._tag === "TerminalError") {
        return rateLimiter
          .forget(key)
          .pipe(
            Effect.andThen(Effect.logError("reconcile failed terminally, will not retry", cause)),
            Effect.annotateLogs({ key }),
            Effect.as("error" as const)
          )
      }
      return Effect.gen(function* () {
        const delay = yield* rateLimiter.when(key)
        const failures = yield* rateLimiter.numRequeues(key)
        const log = Cause.hasDies(exit.cause) ? Effect.logError : Effect.logWarning
        yield* log("reconcile failed, will retry", cause).pipe(
          Effect.annotateLogs({ key, failures, retryInMillis: Duration.toMillis(delay) })
        )
        yield* queue.add(key, delay)
        return "error" as const
      })
    }

    // Uninterruptible except for reconcile itself: once a key is taken, settle and done run.
    const step = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(queue.take, (key) => {
        const started = clock.currentTimeMillisUnsafe()
        return (observe?.onStarted?.(key) ?? Effect.void).pipe(
          Effect.andThen(Effect.exit(restore(Effect.suspend(() => reconcile(key))))),
          Effect.flatMap((exit) => settle(key, exit)),
          Effect.tap((result) =>
            result === undefined || observe?.onFinished === undefined
              ? Effect.void
              : observe.onFinished(key, clock.currentTimeMillisUnsafe() - started, result)
          ),
          Effect.ensuring(queue.done(key))
        )
      })
    )

    const workers = Array.from({ length: Math.max(1, options.concurrency) }, () => Effect.forever(step))
    // Workers run until interrupted; a defect in one (a failing observer) stops all and surfaces.
    yield* Effect.all(workers, { concurrency: "unbounded", discard: true })
    return yield* Effect.never
  })
