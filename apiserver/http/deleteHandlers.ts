// DELETE of one object or of a selected collection, with DeleteOptions' preconditions.
import { Effect, Result } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject, ListOptions } from "../../src/kube/KubeApi.ts"
import { ApiFailure } from "./apiStatus.ts"
import { isDryRun, parseBody } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { listKind } from "../catalog.ts"
import { isPlainObject } from "../../src/kube/frozenJson.ts"
import { qualifiedResource } from "../kindRules.ts"
import { keyOf, respond, storeError } from "./objectContext.ts"
import type { ObjectContext } from "./objectContext.ts"
import { jsonReply } from "./reply.ts"
import { quote } from "../storage/storeErrors.ts"

interface DeleteOptions {
  readonly uid?: string
  readonly resourceVersion?: string
}

const deleteOptions = (request: ApiRequest): Effect.Effect<DeleteOptions, ApiFailure> =>
  Effect.map(parseBody(request), (body) => {
    const preconditions = isPlainObject(body) && isPlainObject(body["preconditions"]) ? body["preconditions"] : {}
    return {
      ...(typeof preconditions["uid"] === "string" ? { uid: preconditions["uid"] } : {}),
      ...(typeof preconditions["resourceVersion"] === "string" ? { resourceVersion: preconditions["resourceVersion"] } : {})
    }
  })

/**
 * Deletes one object and answers it: as it was (deleted at once) or marked for deletion (waiting
 * for finalizers). Deletion is always in the background: propagationPolicy Foreground and Orphan
 * are treated as Background.
 */
const deleteOne = (context: ObjectContext, name: string, options: DeleteOptions, dryRun: boolean) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const key = keyOf(context.namespace, name)
    const current = yield* api.get(context.kind.resource, key).pipe(Effect.mapError(storeError(context.kind)))
    if (options.resourceVersion !== undefined && options.resourceVersion !== current.metadata.resourceVersion) {
      return yield* Effect.fail(
        new ApiFailure({
          code: 409,
          reason: "Conflict",
          message: `Operation cannot be fulfilled on ${qualifiedResource(context.kind.resource)} ${quote(name)}: Precondition failed: ResourceVersion in precondition: ${options.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ""}`,
          details: { name, group: context.kind.group, kind: context.kind.resource.plural }
        })
      )
    }
    if (dryRun) return current
    yield* api
      .delete(context.kind.resource, key, { uid: options.uid ?? current.metadata.uid ?? "" })
      .pipe(Effect.mapError(storeError(context.kind)))
    return yield* api.get(context.kind.resource, key).pipe(Effect.orElseSucceed(() => current))
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
      const result = yield* deleteOne(namespaced, item.metadata.name ?? "", {}, isDryRun(request)).pipe(Effect.result)
      if (Result.isSuccess(result)) deleted.push(result.success)
    }
    return jsonReply(200, {
      apiVersion: context.kind.resource.apiVersion,
      kind: listKind(context.kind),
      metadata: { resourceVersion },
      items: deleted
    })
  })
