// DELETE of one object or of a selected collection, with DeleteOptions' preconditions.
import { Effect, Result } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { DeletePreconditions, KubeObject, ListOptions } from "../../../src/kube/KubeApi.ts"
import type { ApiFailure } from "./apiStatus.ts"
import { deletionRefusal } from "../admission/admission.ts"
import { isDryRun, parseBody } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { listKind } from "../catalog.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { keyOf, respond, storeError } from "./objectContext.ts"
import type { ObjectContext } from "./objectContext.ts"
import { jsonReply } from "./reply.ts"
import { conflict, uidPrecondition, versionPrecondition } from "../storage/storeErrors.ts"

const deleteOptions = (request: ApiRequest): Effect.Effect<DeletePreconditions, ApiFailure> =>
  Effect.map(parseBody(request), (body) => {
    const preconditions = isPlainObject(body) && isPlainObject(body["preconditions"]) ? body["preconditions"] : {}
    return {
      ...(typeof preconditions["uid"] === "string" ? { uid: preconditions["uid"] } : {}),
      ...(typeof preconditions["resourceVersion"] === "string" ? { resourceVersion: preconditions["resourceVersion"] } : {})
    }
  })

/**
 * Deletes one object and answers it as the deletion left it: its last state (deleted at once) or
 * marked for deletion (waiting for finalizers); never whatever holds the name by the time the
 * answer is written, which a controller may have re-created (kubectl then waits for the uid it was
 * answered). Deletion is always in the background: propagationPolicy Foreground and Orphan are
 * treated as Background.
 */
const deleteOne = (context: ObjectContext, name: string, preconditions: DeletePreconditions, dryRun: boolean) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const refused = deletionRefusal(context.kind, name)
    if (refused !== undefined) return yield* Effect.fail(refused)
    const key = keyOf(context.namespace, name)
    if (!dryRun) {
      const deleted = yield* api.delete(context.kind.resource, key, preconditions).pipe(Effect.mapError(storeError(context.kind)))
      if (deleted !== undefined) return deleted
    }
    const current = yield* api.get(context.kind.resource, key).pipe(Effect.mapError(storeError(context.kind)))
    if (preconditions.uid !== undefined && preconditions.uid !== current.metadata.uid) {
      const why = uidPrecondition(preconditions.uid, current.metadata.uid)
      return yield* Effect.fail(storeError(context.kind)(conflict(context.kind.resource, name, context.namespace, why)))
    }
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== current.metadata.resourceVersion) {
      const why = versionPrecondition(preconditions.resourceVersion, current.metadata.resourceVersion)
      return yield* Effect.fail(storeError(context.kind)(conflict(context.kind.resource, name, context.namespace, why)))
    }
    return current
  })

export const deleteObject = (context: ObjectContext, request: ApiRequest, name: string) =>
  Effect.gen(function* () {
    const options = yield* deleteOptions(request)
    const last = yield* deleteOne(context, name, options, isDryRun(request))
    return yield* respond(200, context, last)
  })

/** DELETE on a collection: every selected object, answered as a list of what was deleted. */
export const deleteCollection = (context: ObjectContext, request: ApiRequest, listOptions: ListOptions) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const { items, resourceVersion } = yield* api.list(context.kind.resource, listOptions).pipe(Effect.mapError(storeError(context.kind)))
    const deleted: Array<KubeObject> = []
    for (const item of items) {
      const namespaced = { ...context, namespace: item.metadata.namespace }
      // Only the object listed: one re-created under its name since is not part of this collection.
      const listed = { uid: item.metadata.uid }
      const result = yield* deleteOne(namespaced, item.metadata.name ?? "", listed, isDryRun(request)).pipe(Effect.result)
      if (Result.isSuccess(result)) deleted.push(result.success)
      // An object that may not be deleted at all stops the collection's deletion, saying why.
      else if (result.failure.code === 403) return yield* Effect.fail(result.failure)
    }
    return jsonReply(200, {
      apiVersion: context.kind.resource.apiVersion,
      kind: listKind(context.kind),
      metadata: { resourceVersion },
      items: deleted
    })
  })
