// PATCH: JSON patch, merge patch and (built-in kinds only) strategic merge patch, applied to the
// current object and written back guarded by its resourceVersion, as kube-apiserver does; an
// apply patch (server-side apply) goes to applyHandler.ts.
import { Effect, Result } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { ApiFailure, badRequest, fromKubeError, invalidFailure, unsupportedMediaType } from "../http/apiStatus.ts"
import { isDryRun, parseBody, query } from "../http/apiRequest.ts"
import { applyObject } from "./applyHandler.ts"
import { optionsInvalid, trackWrite } from "./fieldManagement.ts"
import type { ApiRequest } from "../http/apiRequest.ts"
import { isCustom } from "../catalog.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { applyJsonPatch } from "./jsonPatch.ts"
import { applyMergePatch } from "../../../src/json/mergePatch.ts"
import { admitted, keyOf, metadataOf, respond, storeError, withMetadata } from "../http/objectContext.ts"
import type { ObjectContext } from "../http/objectContext.ts"
import { quote } from "../storage/storeErrors.ts"
import { applyStrategicMergePatch } from "./strategicMergePatch.ts"

type PatchType = "json" | "merge" | "strategic" | "apply"

const patchTypes: Readonly<Record<string, PatchType>> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply"
}

const patchTypeOf = (context: ObjectContext, contentType: string): Effect.Effect<PatchType, ApiFailure> => {
  const type = patchTypes[contentType]
  const accepted = isCustom(context.kind)
    ? ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
    : Object.keys(patchTypes)
  // As on a real server, custom resources have no Go types for a strategic merge to follow.
  return type === undefined || (type === "strategic" && isCustom(context.kind))
    ? Effect.fail(unsupportedMediaType(contentType, accepted))
    : Effect.succeed(type)
}

const applyPatch = (
  context: ObjectContext,
  type: Exclude<PatchType, "apply">,
  current: KubeObject,
  patch: unknown,
  name: string
): Effect.Effect<unknown, ApiFailure> => {
  switch (type) {
    case "merge":
      return Effect.succeed(applyMergePatch(current, patch))
    case "strategic": {
      const result = applyStrategicMergePatch(current, patch, context.kind.mergeKeys ?? {})
      return Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.fail(badRequest(result.failure.message))
    }
    case "json": {
      const result = applyJsonPatch(current, patch)
      if (Result.isSuccess(result)) return Effect.succeed(result.success)
      return Effect.fail(
        result.failure.malformed
          ? badRequest(result.failure.message)
          : new ApiFailure({
              code: 422,
              reason: "Invalid",
              message: "the server rejected our request due to an error in our request",
              details: {
                name,
                group: context.kind.group,
                kind: context.kind.resource.plural,
                causes: [{ reason: "UnexpectedServerResponse", message: result.failure.message }]
              }
            })
      )
    }
  }
}

// A patch may not rename or move the object it addresses.
const sameIdentity = (context: ObjectContext, current: KubeObject, patched: unknown): Effect.Effect<JsonObject, ApiFailure> => {
  if (!isPlainObject(patched)) return Effect.fail(badRequest("the patched object is not a JSON object"))
  const meta = metadataOf(patched)
  for (const field of ["name", "namespace"] as const) {
    if ((meta[field] ?? undefined) !== current.metadata[field]) {
      return Effect.fail(
        invalidFailure(context.kind, current.metadata.name ?? "", [
          {
            field: `metadata.${field}`,
            message: `Invalid value: ${quote(meta[field] ?? "")}: field is immutable`
          }
        ])
      )
    }
  }
  return Effect.succeed(patched)
}

const maxPatchAttempts = 5

/**
 * Applies the patch to the current object and writes the result guarded by the resourceVersion it
 * read; a concurrent write makes it read and apply again (as kube-apiserver retries), unless the
 * patch itself names a resourceVersion, which is then a precondition.
 */
export const patchObject = (context: ObjectContext, request: ApiRequest, name: string, subresource: Subresource) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const type = yield* patchTypeOf(context, request.contentType)
    if (type === "apply") return yield* applyObject(context, request, name, subresource)
    if (query(request, "force") !== null) {
      return yield* Effect.fail(optionsInvalid("PatchOptions", "force", "Forbidden: may not be specified for non-apply patch"))
    }
    const patch = yield* parseBody(request)
    const key = keyOf(context.namespace, name)
    for (let attempt = 1; ; attempt++) {
      const current = yield* api.get(context.kind.resource, key).pipe(Effect.mapError(storeError(context.kind)))
      const patched = yield* Effect.flatMap(applyPatch(context, type, current, patch, name), (p) => sameIdentity(context, current, p))
      const admittedPatch = yield* admitted(context, patched, "patch", subresource, current)
      const warnings = admittedPatch.warnings
      const object = yield* trackWrite(context, request, current, patched, admittedPatch.object, subresource)
      const meta = metadataOf(object)
      const precondition = meta["resourceVersion"] !== undefined && meta["resourceVersion"] !== current.metadata.resourceVersion
      const guarded = precondition ? object : withMetadata(object, { resourceVersion: current.metadata.resourceVersion })
      if (isDryRun(request)) return yield* respond(200, context, guarded as KubeObject, warnings)
      const written = yield* api.update(context.kind.resource, guarded as KubeObject, subresource).pipe(Effect.result)
      if (Result.isSuccess(written)) return yield* respond(200, context, written.success, warnings)
      const error = written.failure
      if (error._tag === "Conflict" && !precondition && attempt < maxPatchAttempts) continue
      return yield* Effect.fail(fromKubeError(context.kind, error))
    }
  })
