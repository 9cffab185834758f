import { Effect, Stream } from "effect"
import type { Scope } from "effect"
import type { KubeApi, ListOptions } from "./KubeApi.ts"
import { objectKey } from "./objectKey.ts"
import type { Change, Indexes, StoreWriter } from "./store.ts"
import { watcher } from "./watcher.ts"
import type { WatcherEvent } from "./watcher.ts"

/**
 * Writes the events of a watcher of the store's kind (`options`: its namespace and selectors) into
 * the store for the life of the scope (kube-runtime's reflector): the store's one writer. Its lists
 * are cut to what the store keeps page by page (the store's transform): a list is never held whole
 * as the server sent it. Each change, watched or our own write, then goes to `onChange`, which may
 * read every store: they all exist before any reflector starts.
 */
export const reflect = <A, I extends Indexes<A>>(
  store: StoreWriter<A, I>,
  options: Omit<ListOptions, "transform">,
  onChange: (change: Change<A>) => Effect.Effect<void>
): Effect.Effect<void, never, KubeApi | Scope.Scope> => {
  const events = watcher(store.resource, { ...options, transform: store.transform })
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
