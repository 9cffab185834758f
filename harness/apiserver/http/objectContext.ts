// What the handlers of single objects share: the request's context and the steps every write
// takes (placing the body, admission, answering in the negotiated representation).
import type { EncodedJson } from "./encodedJson.ts"
import { Clock, Effect } from "effect"
import type { KubeObject, ObjectKey, Subresource } from "../../../src/kube/KubeApi.ts"
import type { KubeError } from "../../../src/kube/errors.ts"
import { admit } from "../admission/admission.ts"
import type { FieldValidation } from "../admission/admission.ts"
import { badRequest, fromKubeError } from "./apiStatus.ts"
import type { ApiFailure } from "./apiStatus.ts"
import { isTrue, parseBody, query } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import type { ServedKind } from "../catalog.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import type { Representation } from "./negotiation.ts"
import { objectReply } from "./representation.ts"
import type { IncludeObject } from "../tables/table.ts"

/** What every object handler needs besides the request. */
export interface ObjectContext {
  readonly kind: ServedKind
  readonly namespace: string | undefined
  readonly representation: Representation
  readonly include: IncludeObject
  readonly fieldValidation: FieldValidation
  readonly decoderAdmission: boolean
  /** The server's JSON texts of the versions it sends. */
  readonly json: EncodedJson
}

export const keyOf = (namespace: string | undefined, name: string): ObjectKey => (namespace === undefined ? { name } : { name, namespace })

export const storeError = (kind: ServedKind) => (error: KubeError) => fromKubeError(kind, error)

export const respond = (status: number, context: ObjectContext, object: KubeObject, warnings: ReadonlyArray<string> = []) =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    objectReply(status, context.kind, object, context.representation, { now, include: context.include, warnings, json: context.json })
  )

export const metadataOf = (body: JsonObject): JsonObject => (isPlainObject(body["metadata"]) ? body["metadata"] : {})

export const withMetadata = (body: JsonObject, changes: Record<string, unknown>): JsonObject => ({
  ...body,
  metadata: { ...metadataOf(body), ...changes }
})

export const objectBody = (request: ApiRequest) =>
  Effect.flatMap(parseBody(request), (body) =>
    isPlainObject(body) ? Effect.succeed(body) : Effect.fail(badRequest("the request body must be a JSON or YAML object"))
  )

// The object's namespace must be the request's (or absent, then the request's is taken).
export const placed = (context: ObjectContext, body: JsonObject, name?: string): Effect.Effect<JsonObject, ApiFailure> => {
  const meta = metadataOf(body)
  const given = typeof meta["namespace"] === "string" && meta["namespace"] !== "" ? meta["namespace"] : undefined
  if (context.kind.resource.namespaced && given !== undefined && given !== context.namespace) {
    return Effect.fail(badRequest("the namespace of the provided object does not match the namespace sent on the request"))
  }
  if (name !== undefined && typeof meta["name"] === "string" && meta["name"] !== "" && meta["name"] !== name) {
    return Effect.fail(badRequest(`the name of the object (${String(meta["name"])}) does not match the name on the URL (${name})`))
  }
  return Effect.succeed(
    withMetadata(body, {
      ...(context.kind.resource.namespaced ? { namespace: context.namespace } : {}),
      ...(name === undefined ? {} : { name })
    })
  )
}

/** `old`: the stored object a patch was applied to (see AdmissionOptions). */
export const admitted = (
  context: ObjectContext,
  object: unknown,
  operation: "create" | "update" | "patch",
  subresource: Subresource,
  old?: KubeObject
) =>
  Effect.fromResult(
    admit(context.kind, object, {
      fieldValidation: context.fieldValidation,
      operation,
      subresource,
      decoderAdmission: context.decoderAdmission,
      old
    })
  )

/** `?watch=true` or the legacy /watch/ prefix. */
export const isWatch = (request: ApiRequest, watchPrefix: boolean): boolean => watchPrefix || isTrue(query(request, "watch"))
