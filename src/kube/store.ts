// A local, always-current copy of one kind (kube-runtime's reflector Store): reads are
// synchronous, each version is decoded once as it comes in, and declared indexes follow every
// write. One writer fills it (the reflector, reflector.ts); our own writes go in through
// `written`/`removed` so the next reconcile reads them before the watch event arrives.
import { Deferred, Effect } from "effect"
import { keepUnchanged } from "../json/unchangedParts.ts"
import type { AlikeObjects } from "./alikeObjects.ts"
import type { KubeObject } from "./KubeApi.ts"
import { isNewer, objectKey } from "./objectKey.ts"
import type { Resource } from "./resources.ts"

/** One version of an object as the store holds it: the object and its typed view. */
export interface Stored<A> {
  readonly raw: KubeObject
  readonly view: A
}

export type Change<A = KubeObject> =
  | { readonly type: "added"; readonly current: Stored<A> }
  | { readonly type: "modified"; readonly old: Stored<A>; readonly current: Stored<A> }
  | { readonly type: "deleted"; readonly old: Stored<A> }

/** The version before a change, if any. */
export const before = <A>(change: Change<A>): Stored<A> | undefined => (change.type === "added" ? undefined : change.old)
/** The version after a change, if any. */
export const after = <A>(change: Change<A>): Stored<A> | undefined => (change.type === "deleted" ? undefined : change.current)
/** The object a change is about: its new version, or the last one it had. */
export const changed = <A>(change: Change<A>): Stored<A> => (change.type === "deleted" ? change.old : change.current)

/** An index the store keeps up to date: told every version that replaces another, under the object's key. */
export interface StoreIndex<A> {
  readonly update: (key: string, previous: Stored<A> | undefined, current: Stored<A> | undefined) => void
}

export type Indexes<A> = Readonly<Record<string, StoreIndex<A>>>

/** What the store's readers see. */
export interface Store<A = KubeObject, I extends Indexes<A> = Indexes<A>> {
  readonly resource: Resource
  readonly get: (key: string) => KubeObject | undefined
  /** The typed view of the object under `key`. */
  readonly view: (key: string) => A | undefined
  readonly entry: (key: string) => Stored<A> | undefined
  readonly values: () => IterableIterator<KubeObject>
  readonly entries: () => IterableIterator<Stored<A>>
  readonly size: () => number
  readonly indexes: I
  /** Resolves once the first list has been stored. */
  readonly synced: Effect.Effect<void>
  readonly hasSynced: () => boolean
  /**
   * Stores an object our own write returned, so the next reconcile sees it before the watch
   * event arrives (an older watch event never overwrites it).
   */
  readonly written: (object: KubeObject) => Effect.Effect<void>
  /**
   * Forgets an object: one we deleted, or, with its `uid`, one a watch's DELETED event says is gone
   * (the store may not hold it yet): then no answer to an earlier write of it can bring it back.
   */
  readonly removed: (key: string, uid?: string) => Effect.Effect<void>
}

/** The store's one writer: what the reflector applies, and where the changes go. */
export interface StoreWriter<A = KubeObject, I extends Indexes<A> = Indexes<A>> extends Store<A, I> {
  /** A complete list: replaces the contents; the differences become changes, as if watched. */
  readonly listed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
  /** Where changes go from now on (the reflector's consumer); before that they go nowhere. */
  readonly onChange: (consumer: (change: Change<A>) => Effect.Effect<void>) => void
  /**
   * What of an object the store keeps (its `transform`; the object itself without one), for its
   * watcher's list to apply page by page (ListOptions.transform): applying it again is a no-op.
   */
  readonly transform: (object: KubeObject) => KubeObject
}

/**
 * The object as the store holds it: a live server sends every version as fresh JSON, so the parts
 * equal to the previous version's are replaced by that version's (unchangedParts.ts). Unchanged
 * parts then stay the same objects: the change mappings compare them by identity, a view decoded
 * from them stays valid, and 10,000 NodeImages do not each hold a second copy of every tag.
 * Objects of the in-process server share their unchanged parts already, and are compared no
 * further than where they differ.
 *
 * `template`: parts of the objects the store took last (alikeObjects.ts), whose parts equal to
 * what a version changed are taken instead: a store of many alike objects (a NodeImage per node,
 * given the same jobs' tags and reporting the same outcomes) then holds each such part once, not
 * once per object. A few recent parts to compare with, not a process-wide pool of equal values:
 * that pool keyed and looked up every changed part, which cost more CPU than anything else in the
 * store (docs/benchmarks.md).
 *
 * `specFollowsGeneration`: the kind's spec changes only with its metadata.generation (a custom
 * resource with a status subresource: the API server moves the generation with every change of
 * the spec, and only then), so a version at the stored generation has the stored spec, taken as it
 * is instead of compared member by member: a NodeImage's status reports leave its spec as it was.
 */
const held = (incoming: KubeObject, previous: KubeObject | undefined, specFollowsGeneration: boolean, template: unknown): KubeObject => {
  let kept = withoutManagedFields(incoming)
  if (
    specFollowsGeneration &&
    previous !== undefined &&
    // The same object: one deleted and made again starts again at generation 1.
    kept.metadata.uid === previous.metadata.uid &&
    kept.metadata.generation !== undefined &&
    kept.metadata.generation === previous.metadata.generation &&
    Object.hasOwn(kept, "spec") &&
    Object.hasOwn(previous, "spec") &&
    // The in-process server's objects share it already, and pass through whole.
    kept["spec"] !== previous["spec"]
  ) {
    kept = { ...kept, spec: previous["spec"] }
  }
  return keepUnchanged(kept, previous, template) as KubeObject
}

/**
 * All of an object but metadata.managedFields, as controller-runtime's TransformStripManagedFields
 * keeps its cache: no reader here uses them, kube-apiserver sends them with every version (for a
 * NodeImage, a field set per writer covering every tag it wrote), and an update that leaves them
 * out keeps the server's.
 */
const withoutManagedFields = (object: KubeObject): KubeObject => {
  if (object.metadata.managedFields === undefined) return object
  const { managedFields: _, ...metadata } = object.metadata
  return { ...object, metadata }
}

/**
 * How many deleted objects' uids a store remembers. An answer to our own write can arrive after the
 * watch told the store of the object's deletion (in `preheat dev`, nearly always: removing a job's
 * last finalizer deletes it, the DELETED event comes first, then the PATCH's answer, the object as
 * it was deleted; over HTTP, sometimes). Without the uid that answer would put the object back, and it would stay: one per
 * deleted job, forever (issue 24's growth of `preheat dev` and the controller). A uid never comes
 * back once deleted, so remembering it is always right; only the last ones are needed, since an
 * answer is in flight for one request's time, and a controller has a few requests in flight at once.
 */
export const deletedUidsKept = 1024

/** The uids of the last `limit` deleted objects (insertion order; the oldest go first). */
const deletedUids = (limit: number) => {
  const uids = new Set<string>()
  return {
    add: (uid: string) => {
      uids.delete(uid)
      uids.add(uid)
      if (uids.size > limit) for (const oldest of uids) return void uids.delete(oldest)
    },
    has: (uid: string | undefined) => uid !== undefined && uids.has(uid)
  }
}

/**
 * An empty store of one kind: a reflector's read cache (kube-runtime's Store), not the object
 * storage behind the in-memory API server (makeInMemoryKubeStore). `decode` makes the typed view of
 * each version (once, as it comes in; given the version it replaces, whose unchanged parts are the
 * same objects, so that it need not read them again); `indexes` are told of every change before it
 * goes to the consumer.
 */
export const makeStore = <A = KubeObject, I extends Indexes<A> = Record<never, never>>(
  resource: Resource,
  options: {
    readonly decode?: (raw: KubeObject, previous: Stored<A> | undefined) => A
    readonly indexes?: I
    /** The kind moves metadata.generation with every change of its spec (`held`). */
    readonly specFollowsGeneration?: boolean
    /** Objects alike: the parts a version changed are shared with the same parts stored last where equal (`held`). */
    readonly alike?: AlikeObjects
    /**
     * What of an object the store keeps, where its readers read a few fields of a large object (a
     * Node): as client-go's SetTransform, applied to every version, listed, watched or our own
     * write's answer, before anything else sees it. Never written back whole.
     */
    readonly transform?: (object: KubeObject) => KubeObject
  } = {}
): StoreWriter<A, I> => {
  const specFollowsGeneration = options.specFollowsGeneration === true
  const alike = options.alike
  const transform = options.transform ?? ((object: KubeObject) => object)
  const decode = options.decode ?? ((raw: KubeObject) => raw as unknown as A)
  const indexes = (options.indexes ?? {}) as I
  const indexList = Object.values(indexes)
  const objects = new Map<string, Stored<A>>()
  const deleted = deletedUids(deletedUidsKept)
  const synced = Deferred.makeUnsafe<void>()
  let isSynced = false
  let consumer: (change: Change<A>) => Effect.Effect<void> = () => Effect.void

  const replace = (key: string, previous: Stored<A> | undefined, current: Stored<A> | undefined) => {
    if (current === undefined) objects.delete(key)
    else objects.set(key, current)
    for (const index of indexList) index.update(key, previous, current)
  }

  const applied = (incoming: KubeObject): Effect.Effect<void> =>
    Effect.suspend(() => {
      const key = objectKey(incoming)
      const old = objects.get(key)
      if (old !== undefined && !isNewer(incoming, old.raw)) return Effect.void
      if (deleted.has(incoming.metadata.uid)) return Effect.void
      const kept = held(transform(incoming), old?.raw, specFollowsGeneration, alike?.template(incoming))
      const raw = alike === undefined ? kept : alike.took(kept, old?.raw)
      const current = { raw, view: decode(raw, old) }
      replace(key, old, current)
      return consumer(old === undefined ? { type: "added", current } : { type: "modified", old, current })
    })

  const removed = (key: string, uid?: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const old = objects.get(key)
      // Only a DELETED event says the object is gone: one we asked to delete may wait for its
      // finalizers or its grace period (a pod), and its next versions must still come in.
      if (uid !== undefined) deleted.add(uid)
      if (old === undefined || (uid !== undefined && old.raw.metadata.uid !== undefined && old.raw.metadata.uid !== uid)) return Effect.void
      replace(key, old, undefined)
      return consumer({ type: "deleted", old })
    })

  const listed = (items: ReadonlyArray<KubeObject>) =>
    Effect.gen(function* () {
      const seen = new Set<string>()
      for (const object of items) {
        seen.add(objectKey(object))
        yield* applied(object)
      }
      for (const key of [...objects.keys()]) if (!seen.has(key)) yield* removed(key)
      isSynced = true
      yield* Deferred.succeed(synced, undefined)
    })

  return {
    resource,
    transform,
    get: (key) => objects.get(key)?.raw,
    view: (key) => objects.get(key)?.view,
    entry: (key) => objects.get(key),
    values: function* () {
      for (const stored of objects.values()) yield stored.raw
    },
    entries: () => objects.values(),
    size: () => objects.size,
    indexes,
    synced: Deferred.await(synced),
    hasSynced: () => isSynced,
    written: applied,
    removed,
    listed,
    onChange: (next) => {
      consumer = next
    }
  }
}

/** An index of keys by values each object has (such as its owners' uids). */
export class KeysBy<A> implements StoreIndex<A> {
  private readonly byValue = new Map<string, Set<string>>()
  private readonly valuesOf: (stored: Stored<A>) => Iterable<string>

  constructor(valuesOf: (stored: Stored<A>) => Iterable<string>) {
    this.valuesOf = valuesOf
  }

  update(key: string, previous: Stored<A> | undefined, current: Stored<A> | undefined): void {
    const was = new Set(previous === undefined ? [] : this.valuesOf(previous))
    const is = new Set(current === undefined ? [] : this.valuesOf(current))
    // Values kept stay where they are, so the keys of a value come in the order the store holds them.
    for (const value of was) {
      if (is.has(value)) continue
      const keys = this.byValue.get(value)
      keys?.delete(key)
      if (keys?.size === 0) this.byValue.delete(value)
    }
    for (const value of is) {
      if (was.has(value)) continue
      let keys = this.byValue.get(value)
      if (keys === undefined) this.byValue.set(value, (keys = new Set()))
      keys.add(key)
    }
  }

  /** The keys of the objects that have `value`. */
  keys(value: string): ReadonlySet<string> {
    return this.byValue.get(value) ?? none
  }
}

const none: ReadonlySet<string> = new Set()
