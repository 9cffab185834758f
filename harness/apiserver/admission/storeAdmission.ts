// The admission of the HTTP front (admission.ts, the namespace lifecycle, the objects that may not
// be deleted) for writes that reach the store without HTTP: `preheat dev`'s controller, daemons and
// workload stand-ins, and the in-memory KubeApi of tests. A write is admitted as a client's request
// would be (fieldValidation unset, so unknown fields are dropped; the body's apiVersion and kind
// filled in where missing, as the live client sends them), and refused with the typed error the
// live client makes of the same Status: 422 and 400 as Invalid with its causes, 403 as Forbidden,
// and a create into a missing namespace as Invalid on metadata.namespace.
import { Result } from "effect"
import { Forbidden, Invalid } from "../../../src/kube/errors.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import type { ObjectKey } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import type { ApiFailure } from "../http/apiStatus.ts"
import { servedKindOf } from "../catalog.ts"
import type { AdmissionRequest, WriteAdmission } from "../storage/store.ts"
import { quote, target } from "../storage/storeErrors.ts"
import { admit, deletionRefusal } from "./admission.ts"
import { terminatingRefusal } from "./namespaceLifecycle.ts"

export interface StoreAdmissionOptions {
  /** Also what the controller would mark invalid, as `preheat apiserver --webhook-validation` (decoderAdmission.ts). */
  readonly decoderAdmission: boolean
  /**
   * Creates only into a namespace that exists and is not being deleted. On where the namespaces
   * are kept as a cluster keeps them (the embedded server seeds them and runs the namespace
   * controller); off for the unit tests' in-memory KubeApi, which has neither.
   */
  readonly namespaceLifecycle: boolean
}

const metadataOf = (object: JsonObject): JsonObject => (isPlainObject(object["metadata"]) ? object["metadata"] : {})

const nameOf = (object: JsonObject): string => {
  const meta = metadataOf(object)
  return String(meta["name"] ?? meta["generateName"] ?? "")
}

const namespaceOf = (object: JsonObject): string | undefined => {
  const namespace = metadataOf(object)["namespace"]
  return typeof namespace === "string" && namespace !== "" ? namespace : undefined
}

// The Status as the live client reads it (layers/kube/live/statusErrors.ts).
const typedError = (resource: Resource, object: JsonObject, verb: string, failure: ApiFailure): Invalid | Forbidden => {
  const at = target(resource, nameOf(object), namespaceOf(object))
  if (failure.code === 403) return new Forbidden({ ...at, verb, message: failure.message })
  const causes = (failure.details?.causes ?? []).map((cause) => ({ field: cause.field ?? "", message: cause.message }))
  return new Invalid({ ...at, causes: causes.length > 0 ? causes : [{ field: "", message: failure.message }] })
}

// What the request would carry: a patch is applied to the stored object, which the server reads in
// the version the request names; a whole object names its own, or the request's where it names none.
const asSent = (resource: Resource, object: JsonObject, operation: AdmissionRequest["operation"]): JsonObject =>
  operation === "patch" || object["apiVersion"] === undefined || object["kind"] === undefined
    ? {
        ...object,
        apiVersion: operation === "patch" ? resource.apiVersion : (object["apiVersion"] ?? resource.apiVersion),
        kind: operation === "patch" ? resource.kind : (object["kind"] ?? resource.kind)
      }
    : object

export const storeAdmission = (options: StoreAdmissionOptions): WriteAdmission => ({
  admit: (resource, object, request, read) => {
    const kind = servedKindOf(resource)
    // A kind the server does not serve is not reached over HTTP either: nothing to admit it by.
    if (kind === undefined) return Result.succeed(object)
    const admitted = admit(kind, asSent(resource, object, request.operation), {
      fieldValidation: "Warn",
      operation: request.operation,
      subresource: request.subresource,
      decoderAdmission: options.decoderAdmission,
      old: request.old
    })
    if (Result.isFailure(admitted)) return Result.fail(typedError(resource, object, request.operation, admitted.failure))
    const namespace = namespaceOf(object)
    if (options.namespaceLifecycle && request.operation === "create" && resource.namespaced && namespace !== undefined) {
      const found = read(resources.namespace, { name: namespace })
      if (found === undefined) {
        return Result.fail(
          new Invalid({
            ...target(resource, nameOf(object), namespace),
            causes: [{ field: "metadata.namespace", message: `namespaces ${quote(namespace)} not found` }]
          })
        )
      }
      const terminating = terminatingRefusal(kind, found, nameOf(object))
      if (terminating !== undefined) return Result.fail(typedError(resource, object, "create", terminating))
    }
    // The HTTP front computes managedFields for each write; without it they are kept as written.
    const managedFields = metadataOf(object)["managedFields"]
    const stored = admitted.success.object
    return Result.succeed(managedFields === undefined ? stored : { ...stored, metadata: { ...metadataOf(stored), managedFields } })
  },
  deletion: (resource: Resource, key: ObjectKey) => {
    const kind = servedKindOf(resource)
    const refused = kind === undefined ? undefined : deletionRefusal(kind, key.name)
    return refused === undefined
      ? undefined
      : new Forbidden({ ...target(resource, key.name, key.namespace), verb: "delete", message: refused.message })
  }
})
