// Reads and whole-object writes of single objects: get, create, update (PUT) and a namespace's
// finalize, as kube-apiserver's REST handlers perform them in front of the store.
import { randomUUID } from "node:crypto"
import { Clock, Effect, Result } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { isDryRun } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { trackWrite } from "../patches/fieldManagement.ts"
import { isCustomResource } from "../kindRules.ts"
import { admitIntoNamespace } from "../admission/namespaceLifecycle.ts"
import { admitted, keyOf, metadataOf, objectBody, placed, respond, storeError, withMetadata } from "./objectContext.ts"
import type { ObjectContext } from "./objectContext.ts"
import { rfc3339 } from "../../../src/api/time.ts"

export const getObject = (context: ObjectContext, name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const object = yield* api.get(context.kind.resource, keyOf(context.namespace, name)).pipe(Effect.mapError(storeError(context.kind)))
    return yield* respond(200, context, object)
  })

// What a dry-run create returns: the object as the store would make it, without storing it.
const dryRunCreated = (object: JsonObject, now: number): JsonObject => {
  const meta = metadataOf(object)
  const name = typeof meta["name"] === "string" && meta["name"] !== "" ? meta["name"] : `${String(meta["generateName"] ?? "")}dryrun`
  return withMetadata(object, { name, uid: randomUUID(), generation: 1, creationTimestamp: rfc3339(now) })
}

export const createObject = (context: ObjectContext, request: ApiRequest) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const body = yield* Effect.flatMap(objectBody(request), (b) => placed(context, b))
    const { object: admittedObject, warnings } = yield* admitted(context, body, "create", "main")
    const object = yield* trackWrite(context, request, undefined, body, admittedObject, "main")
    const name = String(metadataOf(object)["name"] ?? metadataOf(object)["generateName"] ?? "")
    if (context.namespace !== undefined) yield* admitIntoNamespace(context.kind, context.namespace, name)
    if (isDryRun(request))
      return yield* respond(201, context, dryRunCreated(object, yield* Clock.currentTimeMillis) as KubeObject, warnings)
    const created = yield* api.create(context.kind.resource, object as KubeObject).pipe(Effect.mapError(storeError(context.kind)))
    return yield* respond(201, context, created, warnings)
  })

const maxUpdateAttempts = 5

/**
 * A PUT. Its managedFields are computed against the object read here, so a write without a
 * resourceVersion (built-in kinds allow one) is guarded by that object's and retried on a
 * concurrent change, as a patch is; one with a resourceVersion is that precondition.
 */
export const updateObject = (context: ObjectContext, request: ApiRequest, name: string, subresource: Subresource) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const body = yield* Effect.flatMap(objectBody(request), (b) => placed(context, b, name))
    const { object, warnings } = yield* admitted(context, body, "update", subresource)
    const given = metadataOf(object)["resourceVersion"]
    const unconditional = (given === undefined || given === null || given === "") && !isCustomResource(context.kind.resource)
    for (let attempt = 1; ; attempt++) {
      const live = yield* api.get(context.kind.resource, keyOf(context.namespace, name)).pipe(Effect.mapError(storeError(context.kind)))
      const tracked = yield* trackWrite(context, request, live, body, object, subresource)
      if (isDryRun(request)) return yield* respond(200, context, tracked as KubeObject, warnings)
      const guarded = unconditional ? withMetadata(tracked, { resourceVersion: live.metadata.resourceVersion }) : tracked
      const written = yield* api.update(context.kind.resource, guarded as KubeObject, subresource).pipe(Effect.result)
      if (Result.isSuccess(written)) return yield* respond(200, context, written.success, warnings)
      if (written.failure._tag === "Conflict" && unconditional && attempt < maxUpdateAttempts) continue
      return yield* Effect.fail(storeError(context.kind)(written.failure))
    }
  })

/** A namespace's spec.finalizers, written only through /finalize on a real server. */
export const finalizeNamespace = (context: ObjectContext, request: ApiRequest, name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const body = yield* objectBody(request)
    const spec = isPlainObject(body["spec"]) ? body["spec"] : {}
    const finalized = yield* api
      .patch(context.kind.resource, { name }, { spec: { finalizers: spec["finalizers"] ?? null } })
      .pipe(Effect.mapError(storeError(context.kind)))
    return yield* respond(200, context, finalized)
  })
