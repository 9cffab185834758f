// The state of one kind as a stream of events (kube-runtime's watcher): a list, then a watch that
// resumes from the last resourceVersion, for as long as the stream is read.
import { Duration, Effect, type Option, Result, Schedule, Stream } from "effect"
import { ApiAccess, retryLogLevel } from "./ApiAccess.ts"
import type { KubeError } from "./errors.ts"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject, ListOptions } from "./KubeApi.ts"
import type { Resource } from "./resources.ts"

export type WatcherEvent =
  /** Every object there is: what is not in it is gone. */
  | { readonly _tag: "Listed"; readonly objects: ReadonlyArray<KubeObject> }
  | { readonly _tag: "Applied"; readonly object: KubeObject }
  | { readonly _tag: "Deleted"; readonly object: KubeObject }

/**
 * How a failed list or watch is retried: 1 s doubling to 30 s, each retry logged (at DEBUG when
 * `access` says the failure at WARN itself: see retryLogLevel). A controller that stops watching
 * silently acts on stale state forever, so there is no last attempt. The backoff starts over once
 * an event comes through again.
 */
const watchRetry = (resource: Resource, access: Option.Option<ApiAccess["Service"]>) =>
  Schedule.min([Schedule.exponential(Duration.seconds(1), 2), Schedule.spaced(Duration.seconds(30))]).pipe(
    Schedule.setInputType<KubeError>(),
    Schedule.tap((meta) =>
      Effect.logWithLevel(retryLogLevel(access, meta.input))("watch failed; retrying").pipe(
        Effect.annotateLogs({
          kind: resource.kind,
          error: meta.input._tag,
          reason: meta.input.message,
          retryIn: Duration.format(meta.duration)
        })
      )
    )
  )

/**
 * List, then watch from the list's resourceVersion; each watch that ends is resumed from the last
 * version seen (bookmarks advance it without an event). 410 Gone means the server no longer has
 * that version: list again. Other errors are retried by `watchRetry`.
 */
export const watcher = (resource: Resource, options: ListOptions): Stream.Stream<WatcherEvent, never, KubeApi> =>
  Stream.unwrap(
    Effect.map(Effect.all([Effect.service(KubeApi), Effect.serviceOption(ApiAccess)]), ([api, access]) => {
      /** Where the next watch resumes; undefined: list first. */
      let resourceVersion: string | undefined
      const list = Stream.fromEffect(
        Effect.map(api.list(resource, options), (list): WatcherEvent => {
          resourceVersion = list.resourceVersion
          return { _tag: "Listed", objects: list.items }
        })
      )
      const watch = Stream.suspend(() => api.watch(resource, { ...options, resourceVersion: resourceVersion ?? "" })).pipe(
        Stream.filterMap((event) => {
          if (event.type === "BOOKMARK") {
            resourceVersion = event.resourceVersion
            return Result.failVoid
          }
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion
          return Result.succeed<WatcherEvent>(
            event.type === "DELETED" ? { _tag: "Deleted", object: event.object } : { _tag: "Applied", object: event.object }
          )
        }),
        Stream.catchTag("Gone", () =>
          Stream.fromEffect(
            Effect.sync(() => {
              resourceVersion = undefined
            })
          ).pipe(Stream.drain)
        )
      )
      return Stream.suspend(() => (resourceVersion === undefined ? list : watch)).pipe(
        Stream.forever,
        Stream.retry(watchRetry(resource, access)),
        // The retry schedule never ends, so no error gets past it.
        Stream.orDie
      )
    })
  )
