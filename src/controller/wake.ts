// Runs what the reconcilers watch (each folder's watches.ts): a store's change becomes keys on
// the reconcilers' queues (controller-runtime's EnqueueRequestsFromMapFunc).
import { Effect } from "effect"
import { keyOf, objectKey } from "../kube/objectKey.ts"
import { changed } from "../kube/store.ts"
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

/** The changed object's own key (controller-runtime's EnqueueRequestForObject). */
export const itself = <A>(change: Change<A>): Array<string> => [objectKey(changed(change).raw)]

/** The key of the object of `kind` that controls the changed one (EnqueueRequestForOwner, controller owners only). */
export const controllerOf =
  (kind: string) =>
  <A>(change: Change<A>): Array<string> => {
    const { metadata } = changed(change).raw
    return (metadata.ownerReferences ?? [])
      .filter((owner) => owner.kind === kind && owner.controller === true)
      .map((owner) => keyOf(metadata.namespace, owner.name))
  }
