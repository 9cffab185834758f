// An in-memory API server store behind the KubeApi service: the state of the embedded API server,
// and the fake cluster of tests and benchmarks. It behaves like kube-apiserver wherever a
// controller depends on it: one global resourceVersion, optimistic concurrency, status
// subresources, generation, finalizers, background garbage collection, label and field selectors,
// and watches that resume from a resourceVersion or answer Gone.
//
// Memory: every stored object is deeply frozen and handed as is to every reader and watcher (see
// frozenJson.ts). Not modelled here: CRD schema defaulting and validation, admission and namespace
// lifecycle (the HTTP front adds those, and `admitted` puts the same in front of in-process writes:
// admission/storeAdmission.ts), managedFields, foreground and orphan deletion.
import { randomUUID } from "node:crypto"
import { Clock, Context, Data, Duration, Effect, Result, Stream } from "effect"
import { validateDns1123Subdomain } from "../../../src/api/objectNames.ts"
import { isJsonPatch, KubeApi } from "../../../src/kube/KubeApi.ts"
import type {
  DeletePreconditions,
  KubeObject,
  ListOptions,
  ObjectKey,
  ObjectList,
  Patch,
  Subresource,
  WatchEvent
} from "../../../src/kube/KubeApi.ts"
import { AlreadyExists, failedTestPath, Gone, NotFound } from "../../../src/kube/errors.ts"
import type { Conflict, Forbidden, Invalid, KubeError, Unavailable } from "../../../src/kube/errors.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { parseFieldSelector, parseLabelSelector } from "./selectorQuery.ts"
import { fieldValue, isSelectableField } from "./fieldSelection.ts"
import { intern, NotJson, withMetadata } from "./frozenJson.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import {
  createdBody,
  deletionStatus,
  hasStatusSubresource,
  isCustomResource,
  kindId,
  pendingFinalizers,
  storedApiVersion
} from "../kindRules.ts"
import { applyMergePatch } from "../../../src/json/mergePatch.ts"
import { applyJsonPatch } from "../patches/jsonPatch.ts"
import { servedViews } from "./servedVersion.ts"
import { metadataCauses } from "../admission/metadataValidation.ts"
import { collectionOf, DependentsIndex } from "./dependents.ts"
import { conflict, invalid, modified, quote, target, uidPrecondition, versionPrecondition } from "./storeErrors.ts"
import type { Cause } from "./storeErrors.ts"
import { rfc3339 } from "../../../src/api/time.ts"
import { EventHistory } from "./watchHistory.ts"
import { defaultEventLimits, EventRetention } from "./eventRetention.ts"
import type { EventLimits } from "./eventRetention.ts"
import type { HistoryEvent } from "./watchHistory.ts"

export interface InMemoryKubeApiOptions {
  /** Watch events kept per kind (default 10,000); a watch from an older resourceVersion gets Gone. */
  readonly historyLimit?: number
  /** Bytes of versions (watchHistory.ts's `versionBytes`) kept per kind (default 16 MiB); older events are dropped as by the count. */
  readonly historyLimitBytes?: number
  /** How often an idle watch receives a BOOKMARK (default 1 minute, as kube-apiserver). */
  readonly bookmarkInterval?: Duration.Input
  /** How long and how many core/v1 Events are kept (eventRetention.ts; default 1 h, 10,000, 8 MiB). */
  readonly eventLimits?: Partial<EventLimits>
}

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"

/** Decides whether a request fails before it reaches the store: for testing retries and restarts. */
export type Fault = (request: {
  readonly verb: Verb
  readonly resource: Resource
  readonly key?: ObjectKey
}) => Forbidden | Unavailable | undefined

/** A write as admission sees it. */
export interface AdmissionRequest {
  readonly operation: "create" | "update" | "patch"
  readonly subresource: Subresource
  /** The stored object a patch changes, in the version written: what it leaves as it was is not validated again. */
  readonly old?: KubeObject | undefined
}

/** What a write's admission may read: the stored object of a key, in that resource's version. */
export type StoreReader = (resource: Resource, key: ObjectKey) => KubeObject | undefined

/**
 * What kube-apiserver does between a request and its storage, for writes that arrive without HTTP
 * (admission/storeAdmission.ts): run in the same step as the write, so nothing changes in between.
 */
export interface WriteAdmission {
  /** The object to store in place of `object`, or why it is refused. */
  readonly admit: (
    resource: Resource,
    object: JsonObject,
    request: AdmissionRequest,
    read: StoreReader
  ) => Result.Result<JsonObject, Invalid | Forbidden>
  /** Why an object may not be deleted at all, if it may not. */
  readonly deletion: (resource: Resource, key: ObjectKey) => Forbidden | undefined
}

/** The store behind an in-memory KubeApi, for tests that need to look inside or break things. */
export class InMemoryKubeStore extends Context.Service<
  InMemoryKubeStore,
  {
    /** The current global resourceVersion. */
    readonly resourceVersion: Effect.Effect<string>
    /** Every stored object of a kind (frozen), in key order. */
    readonly objects: (resource: Resource) => Effect.Effect<ReadonlyArray<KubeObject>>
    /** How many watches are open: a consumer that stops must release its watch. */
    readonly openWatches: Effect.Effect<number>
    /** Forgets all watch history, as an etcd compaction: resuming from an older resourceVersion is Gone. */
    readonly compact: Effect.Effect<void>
    /** Fails the requests it picks (from now on, and watches at their start) until cleared with undefined. */
    readonly setFault: (fault: Fault | undefined) => Effect.Effect<void>
    /** Ends every open watch with this error, as a dropped connection does. */
    readonly breakWatches: (error: Forbidden | Unavailable) => Effect.Effect<void>
    /**
     * The same store without admission: for writing what an API server refuses, to test that the
     * roles survive it (an object stored before a rule existed, or by a cluster without the rule).
     */
    readonly unadmitted: KubeApi["Service"]
  }
>()("preheat/apiserver/store/InMemoryKubeStore") {}

type Stored = KubeObject

interface KindState {
  readonly id: string
  readonly resource: Resource
  /** Keyed by `namespace/name` (namespaced kinds) or name. */
  readonly objects: Map<string, Stored>
  readonly history: EventHistory
  /** The open watches of this kind that select by predicate only. */
  readonly watches: Set<WatchState>
  /** The open watches of one object each (a metadata.name field selector), by key. */
  readonly watchesByKey: Map<string, Set<WatchState>>
}

/** An open watch: how far it has read, whether events it had not read were dropped, how to wake it. */
interface WatchState {
  cursor: number
  lost: boolean
  wake: (() => void) | undefined
}

/** What a list or watch selects: a predicate, and the one object's key when the selector names it. */
interface Selection {
  readonly matches: (object: Stored) => boolean
  readonly key: string | undefined
}

interface Located {
  readonly kind: KindState
  readonly key: string
}

/**
 * A request only a caller's bug sends (a real server answers 400 or 404): the in-memory API dies
 * with `defect` instead of failing, so that tests see the bug.
 */
class CallerBug extends Data.TaggedError("CallerBug")<{ readonly defect: unknown }> {}

// ---- the store ---------------------------------------------------------------------------------

const generateNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"
const defaultHistoryLimit = 10_000
const defaultHistoryLimitBytes = 16 * 1024 * 1024

/** A fresh, empty store: the KubeApi it serves and the inspector handle for tests. */
export const makeInMemoryKubeStore = (options: InMemoryKubeApiOptions = {}) => {
  const historyLimit = Math.max(1, Math.floor(options.historyLimit ?? defaultHistoryLimit))
  const historyLimits = { count: historyLimit, bytes: Math.max(0, options.historyLimitBytes ?? defaultHistoryLimitBytes) }
  const bookmarkMillis = Math.max(1, Duration.toMillis(options.bookmarkInterval ?? Duration.minutes(1)))

  // Starts above "0", which a watch reads as "from now": a list of an empty server must not return it.
  let resourceVersion = 1
  const kinds = new Map<string, KindState>()
  const asServed = servedViews()
  const owners = new DependentsIndex<Located>()
  const events = new EventRetention({ ...defaultEventLimits, ...options.eventLimits })
  const eventKind = kindId(resources.event)
  /** Watches to wake once the current request is done. */
  const toWake: Array<() => void> = []
  const wake = (watch: WatchState): void => {
    if (watch.wake === undefined) return
    toWake.push(watch.wake)
    watch.wake = undefined
  }
  let fault: Fault | undefined
  let watchBreak: { readonly epoch: number; readonly error: Forbidden | Unavailable | undefined } = {
    epoch: 0,
    error: undefined
  }

  const kindOf = (resource: Resource): KindState => {
    const id = kindId(resource)
    let kind = kinds.get(id)
    if (kind === undefined) {
      const watches = new Set<WatchState>()
      const watchesByKey = new Map<string, Set<WatchState>>()
      // A watch that had not read a dropped event has lost it: it ends with Gone.
      const onEvict = (event: HistoryEvent) => {
        for (const set of [watches, watchesByKey.get(event.key)]) {
          for (const watch of set ?? []) {
            if (watch.cursor < event.rv && !watch.lost) {
              watch.lost = true
              wake(watch)
            }
          }
        }
      }
      kind = { id, resource, objects: new Map(), history: new EventHistory(historyLimits, onEvict), watches, watchesByKey }
      kinds.set(id, kind)
    }
    return kind
  }

  const objectKey = (resource: Resource, name: string, namespace: string | undefined): string =>
    resource.namespaced ? `${namespace ?? ""}/${name}` : name

  // Runs one request atomically (nothing else runs until it returns: the body is synchronous) with
  // the Clock's time; its API errors fail the effect, a caller's bug is a defect. Watches wake afterwards.
  const run = <A, E extends KubeError>(body: (now: number) => Result.Result<A, E | CallerBug>): Effect.Effect<A, E> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      try {
        const outcome = body(now)
        if (Result.isSuccess(outcome)) return Effect.succeed(outcome.success)
        const error = outcome.failure
        return error instanceof CallerBug ? Effect.die(error.defect) : Effect.fail(error)
      } finally {
        for (const wake of toWake.splice(0)) wake()
      }
    })

  const checkFault = (verb: Verb, resource: Resource, key?: ObjectKey): Result.Result<void, Forbidden | Unavailable> => {
    const error = fault?.(key === undefined ? { verb, resource } : { verb, resource, key })
    return error === undefined ? Result.succeed(undefined) : Result.fail(error)
  }

  const internOrInvalid = (
    resource: Resource,
    name: string,
    namespace: string | undefined,
    value: JsonObject,
    previous: Stored | undefined
  ): Result.Result<Stored, Invalid> => {
    // intern throws NotJson for what JSON cannot hold (frozenJson.ts); anything else it throws is a bug.
    try {
      return Result.succeed(intern(value, previous) as Stored)
    } catch (error) {
      if (!(error instanceof NotJson)) throw error
      return Result.fail(invalid(resource, name, namespace, [{ field: error.path, message: `Invalid value: ${error.reason}` }]))
    }
  }

  // ---- indexes and events ----

  const index = (kind: KindState, key: string, previous: Stored | undefined, next: Stored | undefined): void =>
    owners.update({ kind, key }, `${kind.id}\n${key}`, previous, next)

  const record = (kind: KindState, event: HistoryEvent): void => {
    kind.history.push(event)
    for (const watch of kind.watches) wake(watch)
    for (const watch of kind.watchesByKey.get(event.key) ?? []) wake(watch)
  }

  const store = (kind: KindState, key: string, previous: Stored | undefined, next: Stored, rv: number): void => {
    kind.objects.set(key, next)
    index(kind, key, previous, next)
    record(kind, { rv, key, type: previous === undefined ? "ADDED" : "MODIFIED", object: next, previous })
  }

  // ---- validation ----

  interface Addressed {
    readonly meta: JsonObject
    readonly name: string
    readonly namespace: string | undefined
  }

  // The object's metadata, name and namespace, checked for the kind's scope.
  const address = (resource: Resource, input: unknown, nameRequired: boolean): Result.Result<Addressed, Invalid> => {
    const meta = isPlainObject(input) ? input.metadata : undefined
    if (!isPlainObject(meta)) {
      return Result.fail(
        invalid(resource, "", undefined, [{ field: "metadata", message: "Required value: an object with metadata is required" }])
      )
    }
    const name = typeof meta.name === "string" ? meta.name : ""
    const namespace = typeof meta.namespace === "string" && meta.namespace !== "" ? meta.namespace : undefined
    if (resource.namespaced && namespace === undefined) {
      return Result.fail(invalid(resource, name, undefined, [{ field: "metadata.namespace", message: "Required value" }]))
    }
    if (!resource.namespaced && namespace !== undefined) {
      return Result.fail(
        invalid(resource, name, namespace, [
          {
            field: "metadata.namespace",
            message: `Forbidden: ${resource.kind} is cluster-scoped and takes no namespace`
          }
        ])
      )
    }
    if (nameRequired && name === "") {
      return Result.fail(invalid(resource, "", namespace, [{ field: "metadata.name", message: "Required value: name is required" }]))
    }
    return Result.succeed({ meta, name, namespace })
  }

  // get, patch and delete address by key: a key of the wrong scope names nothing (404 on a real server).
  const lookup = (resource: Resource, key: ObjectKey): Result.Result<{ kind: KindState; key: string; object: Stored }, NotFound> => {
    const namespace = key.namespace === "" ? undefined : key.namespace
    const kind = kindOf(resource)
    const k = objectKey(resource, key.name, namespace)
    const object = resource.namespaced === (namespace !== undefined) ? kind.objects.get(k) : undefined
    if (object === undefined) return Result.fail(new NotFound(target(resource, key.name, namespace)))
    return Result.succeed({ kind, key: k, object })
  }

  // ---- deletion and garbage collection ----

  const remove = (kind: KindState, key: string, last: Stored, now: number): Stored => {
    const rv = ++resourceVersion
    const tombstone = withMetadata(last, { resourceVersion: String(rv) })
    kind.objects.delete(key)
    index(kind, key, last, undefined)
    record(kind, { rv, key, type: "DELETED", object: tombstone, previous: last })
    const uid = last.metadata.uid
    if (uid !== undefined) collectDependents(uid, now)
    return tombstone
  }

  // Deletes now, or marks for deletion while finalizers remain (an already marked object stays as
  // it is); answers the object as deleted (its tombstone) or as marked.
  const deleteObject = (kind: KindState, key: string, object: Stored, now: number): Stored => {
    if (pendingFinalizers(kind.resource, object) === 0) return remove(kind, key, object, now)
    if (object.metadata.deletionTimestamp !== undefined) return object
    const rv = ++resourceVersion
    const status = deletionStatus(kind.resource, object["status"])
    const marked = status === object["status"] ? object : Object.freeze({ ...object, status: intern(status, object["status"]) })
    const next = withMetadata(marked as Stored, {
      deletionTimestamp: rfc3339(now),
      deletionGracePeriodSeconds: 0,
      generation: (object.metadata.generation ?? 0) + 1,
      resourceVersion: String(rv)
    })
    store(kind, key, object, next, rv)
    return next
  }

  // Background garbage collection: a dependent with no owner left is deleted (respecting its own
  // finalizers); one with other live owners only loses the references to owners that are gone.
  const collectDependents = (ownerUid: string, now: number): void => {
    for (const { kind, key } of owners.dependentsOf(ownerUid)) {
      const object = kind.objects.get(key)
      if (object === undefined) continue
      const collection = collectionOf(object, (uid) => owners.isLive(uid))
      if (collection?.action === "delete") {
        deleteObject(kind, key, object, now)
      } else if (collection?.action === "keep") {
        const rv = ++resourceVersion
        store(kind, key, object, withMetadata(object, { ownerReferences: collection.owners, resourceVersion: String(rv) }), rv)
      }
    }
  }

  // Events are deleted (watchers see DELETED, as when etcd's lease of --event-ttl runs out) once
  // older than the TTL or beyond the count or bytes kept, checked as each new one is created.
  const expireEvents = (kind: KindState, key: string, created: Stored, now: number): void => {
    events.added(key, created.metadata.uid ?? "", now, JSON.stringify(created).length)
    for (const due of events.due(now)) {
      const object = kind.objects.get(due.key)
      if (object !== undefined && object.metadata.uid === due.uid) deleteObject(kind, due.key, object, now)
    }
  }

  // ---- writes ----

  // What a write to the main resource may change: not status (kinds with that subresource) and
  // not the fields the server owns.
  const mainCandidate = (resource: Resource, previous: Stored, input: JsonObject, meta: JsonObject): Result.Result<JsonObject, Invalid> => {
    const old = previous.metadata
    const name = old.name ?? ""
    const causes = metadataCauses(meta)
    const deletionTimestamp = meta.deletionTimestamp
    if (old.deletionTimestamp === undefined && deletionTimestamp !== undefined && deletionTimestamp !== null) {
      causes.push({
        field: "metadata.deletionTimestamp",
        message: `Invalid value: ${quote(deletionTimestamp)}: field is immutable; may only be changed via deletion`
      })
    }
    if (old.deletionTimestamp !== undefined && Array.isArray(meta.finalizers)) {
      const added = (meta.finalizers as ReadonlyArray<unknown>).filter((f) => !(old.finalizers ?? []).includes(f as string))
      if (added.length > 0) {
        causes.push({
          field: "metadata.finalizers",
          message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${quote(added)}`
        })
      }
    }
    if (causes.length > 0) return Result.fail(invalid(resource, name, old.namespace, causes))
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = input
    const candidate: Record<string, unknown> = {
      apiVersion: storedApiVersion(resource),
      kind: resource.kind,
      metadata: {
        ...meta,
        name: old.name,
        namespace: old.namespace,
        uid: old.uid,
        resourceVersion: old.resourceVersion,
        generation: old.generation,
        creationTimestamp: old.creationTimestamp,
        deletionTimestamp: old.deletionTimestamp,
        deletionGracePeriodSeconds: old.deletionGracePeriodSeconds
      },
      ...rest
    }
    if (hasStatusSubresource(resource)) candidate.status = previous.status
    return Result.succeed(candidate)
  }

  // The status subresource changes status only (a write without status clears it), and the
  // managedFields the server computed for that write (as kube-apiserver keeps them).
  const statusCandidate = (previous: Stored, input: JsonObject): JsonObject => {
    const managedFields = isPlainObject(input.metadata) ? input.metadata["managedFields"] : undefined
    return managedFields === undefined
      ? { ...previous, status: input.status }
      : { ...previous, metadata: { ...previous.metadata, managedFields }, status: input.status }
  }

  // Whether anything outside metadata (and status, where it is a subresource) changed; after
  // intern, unchanged fields are the very same values.
  const specChanged = (resource: Resource, previous: Stored, next: Stored): boolean => {
    const ignored = (key: string) => key === "metadata" || (key === "status" && hasStatusSubresource(resource))
    const keys = new Set([...Object.keys(previous), ...Object.keys(next)])
    for (const key of keys) if (!ignored(key) && previous[key] !== next[key]) return true
    return false
  }

  const write = (
    kind: KindState,
    key: string,
    previous: Stored,
    input: JsonObject,
    meta: JsonObject,
    subresource: Subresource,
    now: number
  ): Result.Result<Stored, Invalid> =>
    Result.gen(function* () {
      const resource = kind.resource
      const name = previous.metadata.name ?? ""
      const namespace = previous.metadata.namespace
      const candidate = subresource === "status" ? statusCandidate(previous, input) : yield* mainCandidate(resource, previous, input, meta)
      const interned = yield* internOrInvalid(resource, name, namespace, candidate, previous)
      // A write that changes nothing is not a change: same resourceVersion, no event.
      if (interned === previous) return previous
      const deleting = interned.metadata.deletionTimestamp !== undefined
      if (deleting && pendingFinalizers(resource, interned) === 0) {
        // As kube-apiserver: the last finalizer gone, the object is deleted instead of updated, and
        // watchers see it as it was last stored.
        return remove(kind, key, previous, now)
      }
      const rv = ++resourceVersion
      const generation = (previous.metadata.generation ?? 0) + (specChanged(resource, previous, interned) ? 1 : 0)
      const next = withMetadata(interned, { resourceVersion: String(rv), generation })
      store(kind, key, previous, next, rv)
      return next
    })

  const create = (admission: WriteAdmission | undefined) => (resource: Resource, input: KubeObject) =>
    run<KubeObject, AlreadyExists | Invalid | Forbidden | Unavailable>((now) =>
      Result.gen(function* () {
        const addressed = yield* address(resource, input, false)
        const given = addressed.name
        yield* checkFault(
          "create",
          resource,
          addressed.namespace === undefined ? { name: given } : { name: given, namespace: addressed.namespace }
        )
        const body =
          admission === undefined ? input : yield* admission.admit(resource, input, { operation: "create", subresource: "main" }, read)
        const { meta, namespace } = body === input ? addressed : yield* address(resource, body, false)
        const kind = kindOf(resource)
        let name = given
        const generateName = typeof meta.generateName === "string" ? meta.generateName : ""
        if (name === "" && generateName === "") {
          return yield* Result.fail(
            invalid(resource, "", namespace, [
              {
                field: "metadata.name",
                message: "Required value: name or generateName is required"
              }
            ])
          )
        }
        if (name === "") {
          // Five random characters after a prefix cut to leave room for them, as the real server.
          do {
            let suffix = ""
            for (let i = 0; i < 5; i++) suffix += generateNameAlphabet[Math.floor(Math.random() * generateNameAlphabet.length)]
            name = generateName.slice(0, 58) + suffix
          } while (kind.objects.has(objectKey(resource, name, namespace)))
        }
        const causes = metadataCauses(meta)
        for (const msg of validateDns1123Subdomain(name))
          causes.push({ field: "metadata.name", message: `Invalid value: ${quote(name)}: ${msg}` })
        const rvGiven = meta.resourceVersion
        if (rvGiven !== undefined && rvGiven !== null && rvGiven !== "") {
          causes.push({
            field: "metadata.resourceVersion",
            message: "Invalid value: resourceVersion should not be set on objects to be created"
          })
        }
        if (causes.length > 0) return yield* Result.fail(invalid(resource, name, namespace, causes))
        const key = objectKey(resource, name, namespace)
        if (kind.objects.has(key)) return yield* Result.fail(new AlreadyExists(target(resource, name, namespace)))
        const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = body
        const { deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, resourceVersion: _rv, uid: _uid, ...userMeta } = meta
        const candidate: Record<string, unknown> = {
          apiVersion: storedApiVersion(resource),
          kind: resource.kind,
          metadata: {
            ...userMeta,
            name,
            namespace,
            uid: randomUUID(),
            generation: 1,
            creationTimestamp: rfc3339(now)
          },
          ...rest
        }
        createdBody(resource, candidate, name)
        const interned = yield* internOrInvalid(resource, name, namespace, candidate, undefined)
        const rv = ++resourceVersion
        const object = withMetadata(interned, { resourceVersion: String(rv) })
        store(kind, key, undefined, object, rv)
        if (kind.id === eventKind) expireEvents(kind, key, object, now)
        return asServed(resource, object)
      })
    )

  const update =
    (admission: WriteAdmission | undefined) =>
    (resource: Resource, input: KubeObject, subresource: Subresource = "main") =>
      run<KubeObject, NotFound | Conflict | Invalid | Forbidden | Unavailable>((now) =>
        Result.gen(function* () {
          const addressed = yield* address(resource, input, true)
          const key =
            addressed.namespace === undefined ? { name: addressed.name } : { name: addressed.name, namespace: addressed.namespace }
          yield* checkFault("update", resource, key)
          const body = admission === undefined ? input : yield* admission.admit(resource, input, { operation: "update", subresource }, read)
          const { meta, name, namespace } = body === input ? addressed : yield* address(resource, body, true)
          const found = yield* lookup(resource, key)
          if (subresource === "status" && !hasStatusSubresource(resource)) {
            return yield* Result.fail(new NotFound(target(resource, name, namespace)))
          }
          const old = found.object.metadata
          if (typeof meta.uid === "string" && meta.uid !== "" && meta.uid !== old.uid) {
            return yield* Result.fail(conflict(resource, name, namespace, uidPrecondition(meta.uid, old.uid)))
          }
          const rv = meta.resourceVersion
          if (rv === undefined || rv === null || rv === "") {
            if (isCustomResource(resource)) {
              return yield* Result.fail(
                invalid(resource, name, namespace, [
                  {
                    field: "metadata.resourceVersion",
                    message: "Invalid value: 0x0: must be specified for an update"
                  }
                ])
              )
            }
          } else if (rv !== old.resourceVersion) {
            return yield* Result.fail(conflict(resource, name, namespace, modified))
          }
          return asServed(resource, yield* write(found.kind, found.key, found.object, body, meta, subresource, now))
        })
      )

  const patch =
    (admission: WriteAdmission | undefined) =>
    (resource: Resource, key: ObjectKey, body: Patch, subresource: Subresource = "main") =>
      run<KubeObject, NotFound | Conflict | Invalid | Forbidden | Unavailable>((now) =>
        Result.gen(function* () {
          yield* checkFault("patch", resource, key)
          const found = yield* lookup(resource, key)
          const old = found.object.metadata
          const name = old.name ?? key.name
          if (subresource === "status" && !hasStatusSubresource(resource)) {
            return yield* Result.fail(new NotFound(target(resource, name, old.namespace)))
          }
          let merged: unknown
          if (isJsonPatch(body)) {
            // What the live client makes of the HTTP handler's 422: a failed test is a Conflict, any other failure Invalid.
            const result = applyJsonPatch(found.object, body)
            if (Result.isFailure(result)) {
              const { message } = result.failure
              return yield* Result.fail(
                failedTestPath(message) === undefined
                  ? invalid(resource, name, old.namespace, [{ field: "", message }])
                  : conflict(resource, name, old.namespace, message)
              )
            }
            merged = result.success
          } else if (isPlainObject(body)) {
            merged = applyMergePatch(found.object, body)
          } else {
            return yield* Result.fail(
              invalid(resource, name, old.namespace, [{ field: "", message: "Invalid value: a merge patch must be a JSON object" }])
            )
          }
          const meta = isPlainObject(merged) ? merged["metadata"] : undefined
          if (!isPlainObject(merged) || !isPlainObject(meta)) {
            return yield* Result.fail(invalid(resource, name, old.namespace, [{ field: "metadata", message: "Required value" }]))
          }
          // A merge patch carries its precondition as metadata.resourceVersion; a JSON patch as a test.
          const rv = !isJsonPatch(body) && isPlainObject(body.metadata) ? body.metadata.resourceVersion : undefined
          if (rv !== undefined && rv !== null && rv !== old.resourceVersion) {
            return yield* Result.fail(conflict(resource, name, old.namespace, modified))
          }
          const causes: Array<Cause> = []
          for (const field of ["name", "namespace", "uid"] as const) {
            if (meta[field] !== undefined && meta[field] !== old[field]) {
              causes.push({ field: `metadata.${field}`, message: `Invalid value: ${quote(meta[field])}: field is immutable` })
            }
          }
          if (causes.length > 0) return yield* Result.fail(invalid(resource, name, old.namespace, causes))
          if (admission === undefined)
            return asServed(resource, yield* write(found.kind, found.key, found.object, merged, meta, subresource, now))
          const request = { operation: "patch", subresource, old: asServed(resource, found.object) } as const
          const admitted = yield* admission.admit(resource, merged, request, read)
          const admittedMeta = isPlainObject(admitted["metadata"]) ? admitted["metadata"] : {}
          return asServed(resource, yield* write(found.kind, found.key, found.object, admitted, admittedMeta, subresource, now))
        })
      )

  // Preconditions are checked in the same step as the deletion, so nothing can change between them.
  const del = (admission: WriteAdmission | undefined) => (resource: Resource, key: ObjectKey, preconditions?: DeletePreconditions) =>
    run<KubeObject, NotFound | Conflict | Forbidden | Unavailable>((now) =>
      Result.gen(function* () {
        yield* checkFault("delete", resource, key)
        const refused = admission?.deletion(resource, key)
        if (refused !== undefined) return yield* Result.fail(refused)
        const found = yield* lookup(resource, key)
        const { uid, resourceVersion: version } = found.object.metadata
        if (preconditions?.uid !== undefined && preconditions.uid !== uid) {
          return yield* Result.fail(conflict(resource, key.name, key.namespace, uidPrecondition(preconditions.uid, uid)))
        }
        if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== version) {
          const why = versionPrecondition(preconditions.resourceVersion, version)
          return yield* Result.fail(conflict(resource, key.name, key.namespace, why))
        }
        return asServed(resource, deleteObject(found.kind, found.key, found.object, now))
      })
    )

  const get = (resource: Resource, key: ObjectKey) =>
    run<KubeObject, NotFound | Forbidden | Unavailable>(() =>
      Result.gen(function* () {
        yield* checkFault("get", resource, key)
        return asServed(resource, (yield* lookup(resource, key)).object)
      })
    )

  // ---- reads ----

  // A bad selector or scope is a bug in the caller (a real server answers 400/404): a defect.
  const selection = (resource: Resource, options: ListOptions): Result.Result<Selection, CallerBug> => {
    const namespace = options.namespace === "" ? undefined : options.namespace
    if (!resource.namespaced && namespace !== undefined) {
      const defect = new Error(`${resource.kind} is cluster-scoped: it cannot be listed or watched in namespace ${namespace}`)
      return Result.fail(new CallerBug({ defect }))
    }
    const labels = parseLabelSelector(options.labelSelector ?? "")
    if (Result.isFailure(labels)) return Result.fail(new CallerBug({ defect: labels.failure }))
    const fields = parseFieldSelector(options.fieldSelector ?? "")
    if (Result.isFailure(fields)) return Result.fail(new CallerBug({ defect: fields.failure }))
    for (const { field } of fields.success.requirements) {
      if (!isSelectableField(resource, field))
        return Result.fail(new CallerBug({ defect: new Error(`field label not supported: ${field}`) }))
    }
    const labelQuery = labels.success
    const fieldQuery = fields.success
    const anyField = fieldQuery.requirements.length > 0
    const pinned = fieldQuery.requirements.find((r) => r.field === "metadata.name" && r.operator === "=")
    return Result.succeed({
      matches: (object) =>
        (namespace === undefined || object.metadata.namespace === namespace) &&
        labelQuery.matches(object.metadata.labels) &&
        (!anyField || fieldQuery.matches((field) => fieldValue(object, field))),
      key:
        pinned !== undefined && (!resource.namespaced || namespace !== undefined) ? objectKey(resource, pinned.value, namespace) : undefined
    })
  }

  const selected = (kind: KindState, { key, matches }: Selection): Array<Stored> => {
    if (key !== undefined) {
      const object = kind.objects.get(key)
      return object !== undefined && matches(object) ? [object] : []
    }
    const keys: Array<string> = []
    for (const [k, object] of kind.objects) if (matches(object)) keys.push(k)
    keys.sort()
    return keys.map((k) => kind.objects.get(k) as Stored)
  }

  const list = (resource: Resource, options: ListOptions = {}) =>
    run<ObjectList, Forbidden | Unavailable>(() =>
      Result.gen(function* () {
        yield* checkFault("list", resource)
        const items = selected(kindOf(resource), yield* selection(resource, options))
        const served = items.some((item) => item.apiVersion !== resource.apiVersion) ? items.map((item) => asServed(resource, item)) : items
        const { transform } = options
        return { items: transform === undefined ? served : served.map((item) => transform(item)), resourceVersion: String(resourceVersion) }
      })
    )

  // What a watcher with this selection sees of an event: a change that makes an object match
  // arrives as ADDED, one that makes it stop matching as DELETED (as kube-apiserver's watch cache).
  const seen = (
    event: HistoryEvent,
    matches: (object: Stored) => boolean
  ): Extract<WatchEvent, { readonly object: unknown }> | undefined => {
    const now = event.type !== "DELETED" && matches(event.object)
    const before = event.previous !== undefined && matches(event.previous)
    if (now) return { type: before ? "MODIFIED" : "ADDED", object: event.object }
    if (!before) return undefined
    if (event.type === "DELETED") return { type: "DELETED", object: event.object }
    event.leftFilter ??= withMetadata(event.previous as Stored, { resourceVersion: String(event.rv) })
    return { type: "DELETED", object: event.leftFilter }
  }

  const watchSet = (kind: KindState, key: string | undefined): Set<WatchState> => {
    if (key === undefined) return kind.watches
    let set = kind.watchesByKey.get(key)
    if (set === undefined) kind.watchesByKey.set(key, (set = new Set()))
    return set
  }

  const closeWatch = (kind: KindState, key: string | undefined, watch: WatchState): void => {
    watchSet(kind, key).delete(watch)
    if (key !== undefined && kind.watchesByKey.get(key)?.size === 0) kind.watchesByKey.delete(key)
  }

  type Events = readonly [WatchEvent, ...Array<WatchEvent>]
  type WatchError = Gone | Forbidden | Unavailable

  interface OpenedWatch {
    readonly kind: KindState
    readonly selection: Selection
    readonly state: WatchState
    readonly epoch: number
    readonly start: number
    /** When the server ends the watch (timeoutSeconds), if it was told. */
    readonly deadline: number | undefined
    readonly initial: Array<WatchEvent>
  }

  type WatchOptions = ListOptions & { readonly resourceVersion: string; readonly timeoutSeconds?: number }

  // Registers the watch atomically with its starting point, so that no event falls in between.
  const openWatch = (resource: Resource, options: WatchOptions) =>
    run<OpenedWatch, WatchError>((start) =>
      Result.gen(function* () {
        yield* checkFault("watch", resource)
        const kind = kindOf(resource)
        const chosen = yield* selection(resource, options)
        let initial: Array<WatchEvent> = []
        let cursor: number
        if (options.resourceVersion === "" || options.resourceVersion === "0") {
          // As kube-apiserver: the current objects first, as synthetic ADDED events.
          cursor = resourceVersion
          initial = selected(kind, chosen).map((object) => ({ type: "ADDED", object: asServed(resource, object) }))
        } else {
          cursor = Number(options.resourceVersion)
          if (!Number.isSafeInteger(cursor) || cursor < 0) {
            const defect = new Error(`invalid resourceVersion for a watch: ${quote(options.resourceVersion)}`)
            return yield* Result.fail(new CallerBug({ defect }))
          }
          if (cursor < kind.history.trimmedUpTo) return yield* Result.fail(gone(resource, cursor, kind))
        }
        const state: WatchState = { cursor, lost: false, wake: undefined }
        watchSet(kind, chosen.key).add(state)
        const deadline = options.timeoutSeconds === undefined ? undefined : start + options.timeoutSeconds * 1000
        return { kind, selection: chosen, state, epoch: watchBreak.epoch, start, deadline, initial }
      })
    )

  const gone = (resource: Resource, cursor: number, kind: KindState) =>
    new Gone({ kind: resource.kind, message: `too old resource version: ${cursor} (${kind.history.trimmedUpTo})` })

  // Parks the watch until its kind (or its one object) has an event after its cursor, checking
  // first, in the same step, for one that arrived since it last looked.
  const waitForEvent = ({ kind, selection: { key }, state, epoch }: OpenedWatch) =>
    Effect.callback<void>((resume) => {
      if (state.lost || watchBreak.epoch !== epoch || kind.history.hasAfter(state.cursor, key)) {
        resume(Effect.void)
        return
      }
      state.wake = () => resume(Effect.void)
      return Effect.sync(() => {
        state.wake = undefined
      })
    })

  const nextEvents = (resource: Resource, opened: OpenedWatch): Effect.Effect<Events, WatchError> => {
    const {
      kind,
      selection: { key, matches },
      state,
      epoch
    } = opened
    let pending = opened.initial
    // As kube-apiserver's watch cache: a bookmark every interval and one 2 s before the deadline,
    // so that a client resuming after the timeout starts as close to now as possible.
    const bookmarkAfter = (now: number): number => {
      if (opened.deadline === undefined) return now + bookmarkMillis
      const beforeTimeout = opened.deadline - 2000
      return beforeTimeout > now ? Math.min(now + bookmarkMillis, beforeTimeout) : Number.POSITIVE_INFINITY
    }
    let nextBookmarkAt = bookmarkAfter(opened.start)
    return Effect.gen(function* () {
      for (;;) {
        if (watchBreak.epoch !== epoch && watchBreak.error !== undefined) return yield* Effect.fail(watchBreak.error)
        if (pending.length > 0) {
          const out = pending as unknown as Events
          pending = []
          return out
        }
        if (state.lost) return yield* Effect.fail(gone(resource, state.cursor, kind))
        const events = kind.history.since(state.cursor, key)
        // Everything of this kind (or object) up to the global resourceVersion has now been read.
        state.cursor = resourceVersion
        for (const event of events) {
          const visible = seen(event, matches)
          if (visible !== undefined) pending.push({ type: visible.type, object: asServed(resource, visible.object) })
        }
        if (pending.length > 0) continue
        const now = yield* Clock.currentTimeMillis
        if (now >= nextBookmarkAt) {
          nextBookmarkAt = bookmarkAfter(now)
          return [{ type: "BOOKMARK", resourceVersion: String(state.cursor) }] as Events
        }
        if (Number.isFinite(nextBookmarkAt)) yield* Effect.timeoutOption(waitForEvent(opened), nextBookmarkAt - now)
        else yield* waitForEvent(opened)
      }
    })
  }

  const watch = (resource: Resource, options: WatchOptions) =>
    Stream.scoped(
      Stream.fromPull(
        Effect.acquireRelease(openWatch(resource, options), ({ kind, selection: { key }, state }) =>
          Effect.sync(() => closeWatch(kind, key, state))
        ).pipe(Effect.map((opened) => nextEvents(resource, opened)))
      )
    )

  const read: StoreReader = (resource, key) => {
    const found = lookup(resource, key)
    return Result.isSuccess(found) ? asServed(resource, found.success.object) : undefined
  }

  const verbs = (admission: WriteAdmission | undefined) =>
    KubeApi.of({ get, list, watch, create: create(admission), update: update(admission), patch: patch(admission), delete: del(admission) })

  /** The store as is: for a front that admits writes itself (the HTTP server), and for tests. */
  const api = verbs(undefined)

  const inspector = InMemoryKubeStore.of({
    resourceVersion: Effect.sync(() => String(resourceVersion)),
    objects: (resource) => Effect.sync(() => selected(kindOf(resource), { matches: () => true, key: undefined })),
    openWatches: Effect.sync(() => {
      let count = 0
      for (const kind of kinds.values()) {
        count += kind.watches.size
        for (const set of kind.watchesByKey.values()) count += set.size
      }
      return count
    }),
    compact: Effect.sync(() => {
      for (const kind of kinds.values()) kind.history.clear(resourceVersion)
    }),
    setFault: (next) =>
      Effect.sync(() => {
        fault = next
      }),
    breakWatches: (error) =>
      run<void, never>(() => {
        watchBreak = { epoch: watchBreak.epoch + 1, error }
        for (const kind of kinds.values()) {
          for (const watch of kind.watches) wake(watch)
          for (const set of kind.watchesByKey.values()) for (const watch of set) wake(watch)
        }
        return Result.succeed(undefined)
      }),
    unadmitted: api
  })

  /** The same store with `admission` in front of every write, as in-process clients reach it. */
  const admitted = (admission: WriteAdmission): KubeApi["Service"] => verbs(admission)

  return { api, admitted, inspector }
}
