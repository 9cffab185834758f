import { Effect, Stream } from "effect"
import type { Scope } from "effect"
import { objectKey } from "./objectKey.ts"
import type { Change, Indexes, StoreWriter } from "./store.ts"
import type { WatcherEvent } from "./watcher.ts"

/**
 * Writes a watcher's events into its store for the life of the scope (kube-runtime's reflector):
 * the store's one writer. Each change, watched or our own write, then goes to `onChange`, which
 * may read every store: they all exist before any reflector starts.
 */
export const reflect = <A, I extends Indexes<A>, R>(
  store: StoreWriter<A, I>,
  events: Stream.Stream<WatcherEvent, never, R>,
  onChange: (change: Change<A>) => Effect.Effect<void>
): Effect.Effect<void, never, R | Scope.Scope> => {
  store.onChange(onChange)
  const apply = (event: WatcherEvent): Effect.Effect<void> => {
    switch (event._tag) {
      case "Listed":
        return store.listed(event.objects)
      case "Applied":
        return store.written(event.object)
      case "Deleted":
        return store.removed(objectKey(event.object), event.object.metadata.uid)
    }
  }
  return Effect.asVoid(Effect.forkScoped(Stream.runForEach(events, apply)))
}
