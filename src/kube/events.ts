import { Clock, Context, Effect, Option, Random } from "effect"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject } from "./KubeApi.ts"
import { resources } from "./resources.ts"
import { rfc3339 } from "../api/time.ts"
import { escapeForeignText, maxForeignCharacters } from "../api/goQuote.ts"
import { referenceApiVersion } from "../api/references.ts"
import { type EventCorrelator, makeEventCorrelator } from "./eventCorrelation.ts"

/** A core/v1 Event the controller emits about one object, before it is given its involvedObject. */
export interface ObjectEvent {
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly message: string
}

/**
 * The event correlation of one running component (the controller, one daemon): repeated events
 * become a count on one Event, and a flood about one object is cut (eventCorrelation.ts). Each
 * role provides its own (`withEventCorrelation`); without one, every event is created as it comes.
 */
class EventCorrelation extends Context.Service<EventCorrelation, EventCorrelator>()("preheat/kube/EventCorrelation") {}

/** Runs `effect` with an event correlation of its own, as client-go gives each event broadcaster one. */
export const withEventCorrelation = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, EventCorrelation>> =>
  Effect.suspend(() => Effect.provideService(effect, EventCorrelation, makeEventCorrelator()))

/**
 * Records a core/v1 Event about an object, as `kubectl describe` shows them. Events are
 * best-effort, as in client-go: a failure to record one is logged, never fails the reconcile.
 * Events about cluster-scoped objects (NodeImage) go to the default namespace. The message is
 * escaped and bounded once more here (goQuote.ts): whoever built it, no event carries a raw control
 * sequence to `kubectl describe`, and none is longer than an events.k8s.io note (1024). With an
 * EventCorrelation, an Event seen before is one PATCH of its count, lastTimestamp and message, as
 * client-go's recorder sends it (a patch of an Event gone meanwhile creates it again).
 */
export const recordEvent =
  (component: string) =>
  (involved: KubeObject, event: ObjectEvent): Effect.Effect<void, never, KubeApi> =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const correlation = yield* Effect.serviceOption(EventCorrelation)
      const nowMillis = yield* Clock.currentTimeMillis
      const now = rfc3339(nowMillis)
      const name = involved.metadata.name ?? ""
      const namespace = involved.metadata.namespace ?? "default"
      const involvedObject = {
        apiVersion: referenceApiVersion(involved.kind, involved.apiVersion),
        kind: involved.kind,
        name,
        ...(involved.metadata.namespace === undefined ? {} : { namespace: involved.metadata.namespace }),
        uid: involved.metadata.uid
      }
      const message = escapeForeignText(event.message, maxForeignCharacters)
      const decision = Option.isSome(correlation)
        ? correlation.value.correlate({ component, involved: involvedObject, type: event.type, reason: event.reason, message }, nowMillis)
        : undefined
      if (decision?._tag === "Skip") return
      // client-go's timestamp suffix, and a random part for two events in the same (test) instant:
      // unique without a counter that every recorder in the process would have to share.
      const nonce = yield* Random.nextIntBetween(0, 0xffffffff)
      const suffix = `${(yield* Clock.currentTimeNanos).toString(16)}${nonce.toString(16).padStart(8, "0")}`
      const create = (eventName: string, count: number, firstTimestamp: string) =>
        api.create(resources.event, {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name: eventName, namespace },
          involvedObject,
          type: event.type,
          reason: event.reason,
          message: decision?.message ?? message,
          firstTimestamp,
          lastTimestamp: now,
          count,
          source: { component },
          reportingComponent: component
        })
      const write =
        decision?._tag === "Patch"
          ? api
              .patch(
                resources.event,
                { namespace: decision.namespace, name: decision.name },
                { count: decision.count, lastTimestamp: now, message: decision.message }
              )
              .pipe(Effect.catchTag("NotFound", () => create(decision.name, decision.count, decision.firstTimestamp)))
          : create(`${name.slice(0, 200)}.${suffix}`, 1, now)
      const key = decision?.key
      yield* write.pipe(
        Effect.tap((written) =>
          Effect.sync(() => {
            if (key === undefined || !Option.isSome(correlation)) return
            correlation.value.recorded(key, {
              name: written.metadata.name ?? "",
              namespace: written.metadata.namespace ?? namespace,
              count: typeof written["count"] === "number" ? written["count"] : 1,
              firstTimestamp: typeof written["firstTimestamp"] === "string" ? written["firstTimestamp"] : now
            })
          })
        ),
        Effect.catch((error) =>
          Effect.logWarning("could not record event").pipe(Effect.annotateLogs({ reason: event.reason, object: name, error: error._tag }))
        )
      )
    })
