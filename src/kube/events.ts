import { Clock, Effect, Random } from "effect"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject } from "./KubeApi.ts"
import { resources } from "./resources.ts"
import { rfc3339 } from "../api/time.ts"
import { escapeForeignText, maxForeignCharacters } from "../api/goQuote.ts"
import { referenceApiVersion } from "../api/references.ts"

/** A core/v1 Event the controller emits about one object, before it is given its involvedObject. */
export interface ObjectEvent {
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly message: string
}

/**
 * Records a core/v1 Event about an object, as `kubectl describe` shows them. Events are
 * best-effort, as in client-go: a failure to record one is logged, never fails the reconcile.
 * Events about cluster-scoped objects (NodeImage) go to the default namespace. The message is
 * escaped and bounded once more here (goQuote.ts): whoever built it, no event carries a raw control
 * sequence to `kubectl describe`, and none is longer than an events.k8s.io note (1024).
 */
export const recordEvent = (component: string) => (involved: KubeObject, event: ObjectEvent) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const now = rfc3339(yield* Clock.currentTimeMillis)
    const name = involved.metadata.name ?? ""
    const namespace = involved.metadata.namespace ?? "default"
    // client-go's timestamp suffix, and a random part for two events in the same (test) instant:
    // unique without a counter that every recorder in the process would have to share.
    const nonce = yield* Random.nextIntBetween(0, 0xffffffff)
    const suffix = `${(yield* Clock.currentTimeNanos).toString(16)}${nonce.toString(16).padStart(8, "0")}`
    yield* api
      .create(resources.event, {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `${name.slice(0, 200)}.${suffix}`, namespace },
        involvedObject: {
          apiVersion: referenceApiVersion(involved.kind, involved.apiVersion),
          kind: involved.kind,
          name,
          ...(involved.metadata.namespace === undefined ? {} : { namespace: involved.metadata.namespace }),
          uid: involved.metadata.uid
        },
        type: event.type,
        reason: event.reason,
        message: escapeForeignText(event.message, maxForeignCharacters),
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        source: { component },
        reportingComponent: component
      })
      .pipe(
        Effect.catch((error) =>
          Effect.logWarning("could not record event").pipe(Effect.annotateLogs({ reason: event.reason, object: name, error: error._tag }))
        )
      )
  })
