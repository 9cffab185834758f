import { Cause, Clock, Context, Duration, Effect, Exit, FiberSet, Option, Semaphore } from "effect"
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
 * The worker a reconcile runs on. A reconcile that waits on what other keys' reconciles feed too (a
 * NodeImage write carrying several jobs' tasks) sets it aside meanwhile, so that those reconciles
 * get a worker and their part joins the same write instead of the next one.
 */
class Worker extends Context.Service<Worker, { readonly aside: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> }>()(
  "preheat/workqueue/Worker"
) {}

/** Runs `effect` without holding a worker (one of `concurrency`), then takes one again; off a worker, just runs it. */
export const asideFromWorker = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.serviceOption(Worker), (worker) => (Option.isSome(worker) ? worker.value.aside(effect) : effect))

/**
 * Feeds keys from queue to reconcile with at most `concurrency` reconciling at once (a reconcile
 * waiting aside, `asideFromWorker`, does not count), forever (until interrupted). Success forgets
 * the key's failures and honours requeueAfter; a retryable failure
 * (or a defect, so one bad object cannot stop every controller) is logged and retried after the
 * key's rate-limited delay; a TerminalError is logged once and its failures forgotten, not retried.
 * `done` is always called, also when the workers are interrupted mid-reconcile; the key is then
 * re-added so a queue that outlives its workers (leadership lost and regained) still has it.
 */
export const runWorkers = <R>(queue: WorkQueue, options: RunWorkersOptions<R>): Effect.Effect<never, never, R> =>
  Effect.gen(function* () {
    const clock = yield* Clock.Clock
    const { observe, rateLimiter, reconcile } = options
    const workers = yield* Semaphore.make(Math.max(1, options.concurrency))
    const running = yield* FiberSet.make<unknown, never>()
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

    /** One key, on the worker `dispatch` took for it: given back at the end unless set aside then. */
    const work = (key: string) => {
      let holding = true
      const worker = Worker.of({
        aside: (effect) =>
          Effect.uninterruptibleMask((restore) =>
            Effect.gen(function* () {
              holding = false
              yield* workers.release(1)
              const exit = yield* Effect.exit(restore(effect))
              yield* restore(workers.take(1))
              holding = true
              return yield* exit
            })
          )
      })
      // Uninterruptible except for reconcile itself: once a key is taken, settle and done run.
      return Effect.uninterruptibleMask((restore) => {
        const started = clock.currentTimeMillisUnsafe()
        return (observe?.onStarted?.(key) ?? Effect.void).pipe(
          Effect.andThen(Effect.exit(restore(Effect.suspend(() => reconcile(key)).pipe(Effect.provideService(Worker, worker))))),
          Effect.flatMap((exit) => settle(key, exit)),
          Effect.tap((result) =>
            result === undefined || observe?.onFinished === undefined
              ? Effect.void
              : observe.onFinished(key, clock.currentTimeMillisUnsafe() - started, result)
          ),
          Effect.ensuring(queue.done(key)),
          Effect.ensuring(Effect.suspend(() => (holding ? Effect.asVoid(workers.release(1)) : Effect.void)))
        )
      })
    }

    /**
     * The next due key, then a free worker for it, worked on in a fiber of its own. In that order: a
     * dispatcher holding a worker while it waits for a key would keep it from a reconcile coming back
     * from aside (with one worker, for ever). So the one key taken while every worker is busy waits
     * for a worker past the queue's wait metric.
     */
    const dispatch = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const key = yield* queue.take
        const free = yield* Effect.exit(restore(workers.take(1)))
        if (Exit.isFailure(free)) {
          // Interrupted: the key stays due, as settle keeps an interrupted reconcile's.
          yield* queue.add(key)
          yield* queue.done(key)
          return yield* free
        }
        yield* FiberSet.run(running)(work(key))
      })
    )

    // Runs until interrupted; a defect outside a reconcile (a failing observer) stops it and surfaces.
    yield* Effect.raceFirst(Effect.forever(dispatch), FiberSet.join(running))
    return yield* Effect.never
  }).pipe(Effect.scoped)
