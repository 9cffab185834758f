import { Context } from "effect"
import type { Duration, Effect, Scope } from "effect"

/**
 * Keys waiting to be worked on (client-go's workqueue semantics): a key is held once however
 * often it is added, is handed to one worker at a time, and a key added while it is being worked
 * on is handed out again after `done`. Delays read the Clock, so tests move time instead of sleeping.
 */
export interface WorkQueue {
  /** Work on key no earlier than `after` from now (default: at once); the earliest request wins. */
  readonly add: (key: string, after?: Duration.Input) => Effect.Effect<void>
  /** The next due key, waiting until one is due. */
  readonly take: Effect.Effect<string>
  /** The worker finished key; a re-add that arrived meanwhile makes it due again. */
  readonly done: (key: string) => Effect.Effect<void>
  /** Keys waiting (due or delayed), for the queue-depth metric. */
  readonly size: Effect.Effect<number>
}

/**
 * One of the four services (README, Layout): delayed, de-duplicated work, "reconcile this key no
 * earlier than T", as kube-rs's scheduler; shared by the controllers and the daemon, each of which
 * takes named queues of keys from it.
 */
export class Scheduler extends Context.Service<
  Scheduler,
  {
    /** A named queue, alive for the scope (the name labels its metrics). */
    readonly queue: (name: string) => Effect.Effect<WorkQueue, never, Scope.Scope>
  }
>()("preheat/workqueue/Scheduler") {}
