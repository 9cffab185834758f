// Errors as the API server answers them: metav1.Status objects with the reason, code and details
// a real kube-apiserver gives, which clients (kubectl, client-go, client-node) act on.
import { Data } from "effect"
import type { KubeError } from "../../../src/kube/errors.ts"
import type { ServedKind } from "../catalog.ts"
import { qualifiedResource } from "../kindRules.ts"
import { quote } from "../storage/storeErrors.ts"
import type { Cause } from "../storage/storeErrors.ts"

export interface StatusCause {
  readonly reason?: string
  readonly message: string
  readonly field?: string
}

export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly uid?: string
  readonly causes?: ReadonlyArray<StatusCause>
  readonly retryAfterSeconds?: number
}

/** A request that fails: the HTTP code and the Status body to send. */
export class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly code: number
  readonly reason: string
  readonly message: string
  readonly details?: StatusDetails
  /** An inconsistent continuation token, for a list whose consistent snapshot is gone. */
  readonly continue?: string
}> {}

export const statusBody = (failure: ApiFailure) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: failure.continue === undefined ? {} : { continue: failure.continue },
  status: "Failure",
  message: failure.message,
  reason: failure.reason,
  ...(failure.details === undefined ? {} : { details: failure.details }),
  code: failure.code
})

export const badRequest = (message: string): ApiFailure => new ApiFailure({ code: 400, reason: "BadRequest", message })

export const unauthorized = (): ApiFailure => new ApiFailure({ code: 401, reason: "Unauthorized", message: "Unauthorized" })

export const pathNotFound = (): ApiFailure =>
  new ApiFailure({ code: 404, reason: "NotFound", message: "the server could not find the requested resource", details: {} })

export const methodNotAllowed = (method: string): ApiFailure =>
  new ApiFailure({
    code: 405,
    reason: "MethodNotAllowed",
    message: `the server does not allow this method on the requested resource`,
    details: { causes: [{ reason: "UnexpectedServerResponse", message: `${method} is not supported` }] }
  })

export const notAcceptable = (): ApiFailure =>
  new ApiFailure({
    code: 406,
    reason: "NotAcceptable",
    message: "only the following media types are accepted: application/json, application/yaml"
  })

export const unsupportedMediaType = (contentType: string, accepted: ReadonlyArray<string>): ApiFailure =>
  new ApiFailure({
    code: 415,
    reason: "UnsupportedMediaType",
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    details: { causes: [{ reason: "UnexpectedServerResponse", message: `${contentType} is not supported` }] }
  })

/** `ImagePullJob.apps.kruise.io`, `Pod`: how Invalid messages name a kind. */
const qualifiedKind = (kind: ServedKind): string => (kind.group === "" ? kind.resource.kind : `${kind.resource.kind}.${kind.group}`)

// apimachinery's field.ErrorType names, recognised by the words a message starts with.
const causeReasons: ReadonlyArray<readonly [string, string]> = [
  ["Required value", "FieldValueRequired"],
  ["Invalid value", "FieldValueInvalid"],
  ["Unsupported value", "FieldValueNotSupported"],
  ["Forbidden", "FieldValueForbidden"],
  ["Too long", "FieldValueTooLong"],
  ["Too many", "FieldValueTooMany"],
  ["Duplicate value", "FieldValueDuplicate"],
  ["Not found", "FieldValueNotFound"]
]

const causeReason = (message: string): string => causeReasons.find(([prefix]) => message.startsWith(prefix))?.[1] ?? "FieldValueInvalid"

/** 422 with one cause per field error, and the message kubectl prints (a list when there are several). */
export const invalidFailure = (kind: ServedKind, name: string, causes: ReadonlyArray<Cause>): ApiFailure => {
  const rendered = causes.map((c) => (c.field === "" ? c.message : `${c.field}: ${c.message}`))
  const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(", ")}]`
  return new ApiFailure({
    code: 422,
    reason: "Invalid",
    message: `${qualifiedKind(kind)} ${quote(name)} is invalid: ${summary}`,
    details: {
      name,
      group: kind.group,
      kind: kind.resource.kind,
      causes: causes.map((c) => ({ reason: causeReason(c.message), message: c.message, field: c.field }))
    }
  })
}

const resourceDetails = (kind: ServedKind, name: string): StatusDetails => ({
  name,
  group: kind.group,
  kind: kind.resource.plural
})

/** The store's typed errors as kube-apiserver reports them. */
export const fromKubeError = (kind: ServedKind, error: KubeError): ApiFailure => {
  const qualified = qualifiedResource(kind.resource)
  switch (error._tag) {
    case "NotFound":
      // A missing namespace is reported as such, whatever kind was asked for.
      return error.kind === "Namespace" && kind.resource.kind !== "Namespace"
        ? new ApiFailure({
            code: 404,
            reason: "NotFound",
            message: `namespaces ${quote(error.objectName)} not found`,
            details: { name: error.objectName, kind: "namespaces" }
          })
        : new ApiFailure({
            code: 404,
            reason: "NotFound",
            message: `${qualified} ${quote(error.objectName)} not found`,
            details: resourceDetails(kind, error.objectName)
          })
    case "AlreadyExists":
      return new ApiFailure({
        code: 409,
        reason: "AlreadyExists",
        message: `${qualified} ${quote(error.objectName)} already exists`,
        details: resourceDetails(kind, error.objectName)
      })
    case "Conflict":
      return new ApiFailure({ code: 409, reason: "Conflict", message: error.message, details: resourceDetails(kind, error.objectName) })
    case "Gone":
      return new ApiFailure({ code: 410, reason: "Expired", message: error.message })
    case "Invalid":
      return invalidFailure(kind, error.objectName, error.causes)
    case "Unauthorized":
      return new ApiFailure({ code: 401, reason: "Unauthorized", message: error.reason })
    case "Forbidden":
      return new ApiFailure({ code: 403, reason: "Forbidden", message: error.message, details: resourceDetails(kind, error.objectName) })
    case "Unavailable":
      return new ApiFailure({ code: 503, reason: "ServiceUnavailable", message: error.message })
  }
}
