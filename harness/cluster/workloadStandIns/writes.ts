// Writes of the dev cluster's controllers: each result goes into the local store at once, so the
// next reconcile sees it before the watch event arrives (client-go's controllers keep
// "expectations" for the same reason: never create a pod twice).
import { Effect } from "effect"
import { canonicalJson } from "./templateHash.ts"
import type { Json } from "./objects.ts"
import { recordEvent } from "../../../src/kube/events.ts"
import type { ObjectEvent } from "../../../src/kube/events.ts"
import type { Store } from "../../../src/kube/store.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { objectKey } from "../../../src/kube/objectKey.ts"

export const createIn = (store: Store, object: KubeObject) =>
  Effect.gen(function* () {
    const created = yield* (yield* KubeApi).create(store.resource, object)
    yield* store.written(created)
    return created
  })

const keyOf = (object: KubeObject) => ({ name: object.metadata.name ?? "", namespace: object.metadata.namespace ?? "" })

export const patchIn = (store: Store, object: KubeObject, patch: Record<string, unknown>, subresource: Subresource = "main") =>
  Effect.gen(function* () {
    const patched = yield* (yield* KubeApi).patch(store.resource, keyOf(object), patch, subresource)
    yield* store.written(patched)
    return patched
  })

/** Deletes the object (this very one: a uid precondition), already gone counts as done. */
export const deleteIn = (store: Store, object: KubeObject) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const uid = object.metadata.uid
    yield* api.delete(store.resource, keyOf(object), uid === undefined ? {} : { uid }).pipe(Effect.catchTag("NotFound", () => Effect.void))
    yield* store.removed(objectKey(object))
  })

/** Whether writing `next` into the status would change any of its fields. */
export const statusChanges = (current: Json, next: Json): boolean =>
  Object.entries(next).some(([key, value]) => canonicalJson(current[key]) !== canonicalJson(value))

/** Events as the real components report them (`kubectl describe`, `kubectl get events`). */
export const event = (component: string) => {
  const record = recordEvent(component)
  return (involved: KubeObject, type: ObjectEvent["type"], reason: string, message: string) => record(involved, { type, reason, message })
}
