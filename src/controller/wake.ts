// Runs what the reconcilers watch (each folder's watches.ts): a store's change becomes keys on
// the reconcilers' queues (controller-runtime's EnqueueRequestsFromMapFunc).
import { Effect } from "effect"
import type { Change } from "../kube/store.ts"
import type { WorkQueue } from "../workqueue/WorkQueues.ts"

/** One reconciler's interest in a kind: which of its keys a change wakes. */
export interface Watch<A> {
  readonly queue: WorkQueue
  readonly keys: (change: Change<A>) => Iterable<string>
  /** How long the woken keys wait first (so a burst of changes makes one reconcile), ms. */
  readonly delayMs?: number
}

/**
 * A store's change handler. Every watch's keys are read first, while the books show the state
 * before the change; then `note` brings the books up to date; then the keys are added.
 */
export const wake =
  <A>(watches: ReadonlyArray<Watch<A>>, note?: (change: Change<A>) => void) =>
  (change: Change<A>): Effect.Effect<void> =>
    Effect.suspend(() => {
      const woken = watches.map((watch) => ({ watch, keys: [...watch.keys(change)] }))
      note?.(change)
      return Effect.forEach(
        woken,
        ({ keys, watch }) => Effect.forEach(keys, (key) => watch.queue.add(key, watch.delayMs), { discard: true }),
        { discard: true }
      )
    })
