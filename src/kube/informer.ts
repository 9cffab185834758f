import { Deferred, Duration, Effect, Stream } from "effect"
import type { Scope } from "effect"
import { intern } from "./frozenJson.ts"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject, ListOptions } from "./KubeApi.ts"
import { isNewer, objectKey } from "./objectKey.ts"
import type { Resource } from "./resources.ts"

export type Change =
  | { readonly type: "added"; readonly current: KubeObject }
  | { readonly type: "modified"; readonly old: KubeObject; readonly current: KubeObject }
  | { readonly type: "deleted"; readonly old: KubeObject }

/** A local, always-current copy of one kind, fed by list + watch. Reads are synchronous. */
export interface Informer {
  readonly resource: Resource
  readonly get: (key: string) => KubeObject | undefined
  readonly values: () => IterableIterator<KubeObject>
  readonly size: () => number
  /** Resolves once the first list has been stored. */
  readonly synced: Effect.Effect<void>
  readonly hasSynced: () => boolean
  /**
   * Stores an object our own write returned, so the next reconcile sees it before the watch
   * event arrives (an older watch event never overwrites it).
   */
  readonly written: (object: KubeObject) => Effect.Effect<void>
  /** Forgets an object we deleted. */
  readonly removed: (key: string) => Effect.Effect<void>
}

/**
 * The object as the informer holds it: a live server sends every version as fresh JSON, so it is
 * interned against the previous one. Unchanged parts then stay the same objects (the change
 * handlers compare them by identity, and 10,000 NodeImages do not each hold their own copy of
 * every tag), and equal values across objects are held once. Objects of the in-process server
 * are interned already and pass through as they are.
 */
const held = (incoming: KubeObject, previous: KubeObject | undefined): KubeObject => {
  try {
    return intern(incoming, previous) as KubeObject
  } catch {
    return incoming
  }
}

const retryFloor = Duration.seconds(1)
const retryCap = Duration.seconds(30)

/**
 * Runs list + watch for the life of the scope: resumes a watch from the last resourceVersion,
 * lists again after 410 Gone, and retries any other error with backoff (1 s doubling to 30 s),
 * because a controller that stops watching silently acts on stale state forever.
 */
export const makeInformer = Effect.fnUntraced(function* (
  resource: Resource,
  options: ListOptions,
  onChange: (change: Change) => Effect.Effect<void>
): Effect.fn.Return<Informer, never, KubeApi | Scope.Scope> {
  const api = yield* KubeApi
  const store = new Map<string, KubeObject>()
  const synced = yield* Deferred.make<void>()
  let isSynced = false
  let resourceVersion = ""

  const apply = (incoming: KubeObject): Effect.Effect<void> => {
    const key = objectKey(incoming)
    const old = store.get(key)
    if (old !== undefined && !isNewer(incoming, old)) return Effect.void
    const object = held(incoming, old)
    store.set(key, object)
    return onChange(old === undefined ? { type: "added", current: object } : { type: "modified", old, current: object })
  }
  const remove = (key: string): Effect.Effect<void> => {
    const old = store.get(key)
    if (old === undefined) return Effect.void
    store.delete(key)
    return onChange({ type: "deleted", old })
  }

  /** A fresh list replaces the store; the differences become changes, as if watched. */
  const relist = Effect.gen(function* () {
    const list = yield* api.list(resource, options)
    const seen = new Set<string>()
    for (const object of list.items) {
      seen.add(objectKey(object))
      yield* apply(object)
    }
    for (const key of [...store.keys()]) if (!seen.has(key)) yield* remove(key)
    resourceVersion = list.resourceVersion
    isSynced = true
    yield* Deferred.succeed(synced, undefined)
  })

  const watchOnce = api.watch(resource, { ...options, resourceVersion }).pipe(
    Stream.runForEach((event) => {
      if (event.type === "BOOKMARK") {
        resourceVersion = event.resourceVersion
        return Effect.void
      }
      resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion
      return event.type === "DELETED" ? remove(objectKey(event.object)) : apply(event.object)
    })
  )

  const loop = Effect.gen(function* () {
    let delay = retryFloor
    let needList = true
    while (true) {
      const result = yield* Effect.result(needList ? relist : watchOnce)
      if (result._tag === "Success") {
        needList = false
        delay = retryFloor
        continue
      }
      const error = result.failure
      if (error._tag === "Gone") {
        needList = true
        continue
      }
      yield* Effect.logWarning("watch failed; retrying").pipe(
        Effect.annotateLogs({ kind: resource.kind, error: error._tag, retryIn: Duration.format(delay) })
      )
      yield* Effect.sleep(delay)
      delay = Duration.min(Duration.times(delay, 2), retryCap)
    }
  })
  yield* Effect.forkScoped(loop)

  return {
    resource,
    get: (key) => store.get(key),
    values: () => store.values(),
    size: () => store.size,
    synced: Deferred.await(synced),
    hasSynced: () => isSynced,
    written: apply,
    removed: remove
  }
})
