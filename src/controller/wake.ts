// Runs what the reconcilers watch (each folder's watches.ts): a store's change becomes keys on
// the reconcilers' queues (controller-runtime's EnqueueRequestsFromMapFunc).
import { Effect } from "effect"
import { keyOf, objectKey } from "../kube/objectKey.ts"
import { changed } from "../kube/store.ts"
import type { Change } from "../kube/store.ts"
import type { WorkQueue } from "../workqueue/Scheduler.ts"

/**
 * One reconciler's interest in a kind: which of its keys a change wakes. `keys` is a pure mapping
 * (controller-runtime's map functions, kube-rs' mappers): it reads the change and the stores,
 * never a reconciler's books.
 */
export interface Watch<A> {
  readonly queue: WorkQueue
  readonly keys: (change: Change<A>) => Iterable<string>
  /** How long the woken keys wait first (so a burst of changes makes one reconcile), ms. */
  readonly delayMs?: number
}

/**
 * What a change means to one reconciler's books (its state.ts), and the keys the update
 * frees: a deleted job's registry room, the jobs that waited for a newer NodeImage.
 */
export interface Bookkeeping<A> {
  readonly queue: WorkQueue
  readonly note: (change: Change<A>) => Iterable<string>
  readonly delayMs?: number
}

/**
 * A store's change handler: the books are brought up to date and every key is known before the
 * first key is added. The mappings read no books, so they and the bookkeeping may run in any
 * order; but a key must not reach a worker before the books its reconcile reads (a target marked
 * as touched, a placement counter) show the change, so the adds come last.
 */
export const wake =
  <A>(watches: ReadonlyArray<Watch<A>>, books: ReadonlyArray<Bookkeeping<A>> = []) =>
  (change: Change<A>): Effect.Effect<void> =>
    Effect.suspend(() => {
      const woken = [
        ...books.map((book) => ({ queue: book.queue, delayMs: book.delayMs, keys: [...book.note(change)] })),
        ...watches.map((watch) => ({ queue: watch.queue, delayMs: watch.delayMs, keys: [...watch.keys(change)] }))
      ]
      return Effect.forEach(
        woken,
        ({ delayMs, keys, queue }) => Effect.forEach(keys, (key) => queue.add(key, delayMs), { discard: true }),
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
