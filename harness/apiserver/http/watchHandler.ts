// Watches over HTTP: newline-delimited JSON events on a 200 response whose headers go out at once.
// Errors after that point (a resourceVersion too old: 410 Expired) travel as ERROR events carrying
// a Status, and end the stream, as kube-apiserver does.
import { Clock, Effect, Stream } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, ListOptions, WatchEvent } from "../../../src/kube/KubeApi.ts"
import type { KubeError } from "../../../src/kube/errors.ts"
import { badRequest, fromKubeError, statusBody } from "./apiStatus.ts"
import type { ApiFailure } from "./apiStatus.ts"
import { integerParam, isTrue, query } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import type { ObjectContext } from "./objectContext.ts"
import type { Reply } from "./reply.ts"
import { objectBody } from "./representation.ts"

/** Without timeoutSeconds, a watch ends after 30 to 60 minutes (kube-apiserver's default spread). */
const defaultTimeoutSeconds = () => 1800 + Math.floor(Math.random() * 1800)

type Outgoing =
  | WatchEvent
  | { readonly type: "ERROR"; readonly failure: ApiFailure }
  | { readonly type: "INITIAL-END"; readonly resourceVersion: string }

const bookmark = (context: ObjectContext, resourceVersion: string, annotations?: Record<string, string>) => ({
  kind: context.kind.resource.kind,
  apiVersion: context.kind.resource.apiVersion,
  metadata: { resourceVersion, ...(annotations === undefined ? {} : { annotations }) }
})

const encode = (context: ObjectContext, event: Outgoing, now: number, first: { value: boolean }): string => {
  switch (event.type) {
    case "ERROR":
      return `${JSON.stringify({ type: "ERROR", object: statusBody(event.failure) })}\n`
    case "BOOKMARK":
      return `${JSON.stringify({ type: "BOOKMARK", object: bookmark(context, event.resourceVersion) })}\n`
    case "INITIAL-END":
      return `${JSON.stringify({ type: "BOOKMARK", object: bookmark(context, event.resourceVersion, { "k8s.io/initial-events-end": "true" }) })}\n`
    default: {
      // Table watches carry the column definitions in their first event only.
      const { body } = objectBody(context.kind, event.object, context.representation, {
        now,
        include: context.include,
        noHeaders: !first.value
      })
      first.value = false
      // The same bytes as JSON.stringify({ type, object }), with the version's text made once for all watchers.
      return `{"type":${JSON.stringify(event.type)},"object":${context.json.of(body)}}\n`
    }
  }
}

// sendInitialEvents=true: the current objects as ADDED, a bookmark marking their end, then changes.
const initialThenChanges = (context: ObjectContext, options: ListOptions, timeoutSeconds: number) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const api = yield* KubeApi
      const { items, resourceVersion } = yield* api.list(context.kind.resource, options)
      const initial: Array<Outgoing> = items.map((object: KubeObject) => ({ type: "ADDED", object }))
      initial.push({ type: "INITIAL-END", resourceVersion })
      return Stream.concat(
        Stream.fromIterable(initial),
        api.watch(context.kind.resource, { ...options, resourceVersion, timeoutSeconds }) as Stream.Stream<Outgoing, KubeError>
      )
    })
  )

const resourceVersionParam = (request: ApiRequest): Effect.Effect<string, ApiFailure> => {
  const value = query(request, "resourceVersion") ?? ""
  return value === "" || /^\d+$/.test(value)
    ? Effect.succeed(value)
    : Effect.fail(badRequest(`resourceVersion: Invalid value: ${JSON.stringify(value)}: must be a non-negative integer`))
}

export const watchObjects = (context: ObjectContext, request: ApiRequest, options: ListOptions) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const resourceVersion = yield* resourceVersionParam(request)
    const timeoutSeconds = (yield* integerParam(request, "timeoutSeconds")) ?? defaultTimeoutSeconds()
    const bookmarks = isTrue(query(request, "allowWatchBookmarks"))
    const source: Stream.Stream<Outgoing, KubeError> = isTrue(query(request, "sendInitialEvents"))
      ? initialThenChanges(context, options, timeoutSeconds).pipe(Stream.provideService(KubeApi, api))
      : api.watch(context.kind.resource, { ...options, resourceVersion, timeoutSeconds })
    const first = { value: true }
    const events = source.pipe(
      Stream.filter((event) => bookmarks || event.type !== "BOOKMARK"),
      Stream.catch((error: KubeError) => Stream.succeed<Outgoing>({ type: "ERROR", failure: fromKubeError(context.kind, error) })),
      Stream.mapEffect((event) => Effect.map(Clock.currentTimeMillis, (now) => encode(context, event, now, first))),
      Stream.interruptWhen(Effect.sleep(`${timeoutSeconds} seconds`))
    )
    const reply: Reply = {
      _tag: "Stream",
      contentType: context.representation._tag === "Table" ? "application/json;as=Table;v=v1;g=meta.k8s.io" : "application/json",
      events
    }
    return reply
  })
