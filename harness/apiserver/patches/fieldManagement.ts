// Field management around every write, as kube-apiserver's field manager does it: who writes
// (`fieldManager`, else the User-Agent up to its first "/"), which managers the object had, and its
// metadata.managedFields after the write. The decisions themselves are in apply/ownership.ts.
import { Clock, Effect } from "effect"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { rfc3339 } from "../../../src/api/time.ts"
import { ApiFailure } from "../http/apiStatus.ts"
import { query } from "../http/apiRequest.ts"
import type { ApiRequest } from "../http/apiRequest.ts"
import type { ServedKind } from "../catalog.ts"
import { typeOfKind } from "./apply/fieldTypes.ts"
import { decodeManagedFields, encodeManagedFields } from "./apply/managers.ts"
import type { ManagerEntry } from "./apply/managers.ts"
import { recordUpdate } from "./apply/ownership.ts"
import type { Writer } from "./apply/ownership.ts"
import type { ObjectContext } from "../http/objectContext.ts"
import { metadataOf, withMetadata } from "../http/objectContext.ts"

const maxManagerLength = 128

/** A PatchOptions/UpdateOptions problem, as kube-apiserver reports one (422). */
export const optionsInvalid = (options: string, field: string, message: string): ApiFailure =>
  new ApiFailure({
    code: 422,
    reason: "Invalid",
    message: `${options}.meta.k8s.io "" is invalid: ${field}: ${message}`,
    details: { group: "meta.k8s.io", kind: options, causes: [{ reason: causeReason(message), message, field }] }
  })

const causeReason = (message: string): string =>
  message.startsWith("Required value")
    ? "FieldValueRequired"
    : message.startsWith("Forbidden")
      ? "FieldValueForbidden"
      : "FieldValueInvalid"

/** The manager a write is recorded under: `fieldManager`, or the User-Agent's product name. */
export const managerName = (request: ApiRequest, options = "UpdateOptions"): Effect.Effect<string, ApiFailure> => {
  const given = query(request, "fieldManager") ?? ""
  if (given.length > maxManagerLength) {
    return Effect.fail(optionsInvalid(options, "fieldManager", `Too long: may not be more than ${maxManagerLength} bytes`))
  }
  if (given !== "") return Effect.succeed(given)
  return Effect.succeed((request.userAgent ?? "").split("/")[0]!.slice(0, maxManagerLength))
}

export const writerFor = (kind: ServedKind, manager: string, subresource: Subresource): Effect.Effect<Writer> =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    type: typeOfKind(kind),
    manager,
    apiVersion: kind.resource.apiVersion,
    subresource: subresource === "status" ? "status" : "",
    now: rfc3339(now)
  }))

/** The managers an object carries. */
export const managersOf = (object: JsonObject | undefined): Array<ManagerEntry> =>
  object === undefined ? [] : decodeManagedFields(metadataOf(object)["managedFields"])

const isResetRequest = (value: unknown): boolean =>
  Array.isArray(value) && value.length === 1 && isPlainObject(value[0]) && Object.keys(value[0]).length === 0

/**
 * The object as the write will store it: what the write changes (the status only on /status,
 * everything but the status where status is a subresource), to compare with the live object.
 */
const effectiveObject = (kind: ServedKind, live: JsonObject | undefined, object: JsonObject, subresource: Subresource): JsonObject => {
  const { status: _, ...rest } = object
  if (subresource === "status") {
    const { status: _live, ...base } = live ?? object
    return object["status"] === undefined ? base : { ...base, status: object["status"] }
  }
  if (!kind.statusSubresource) return object
  return live?.["status"] === undefined ? rest : { ...rest, status: live["status"] }
}

/**
 * `object` (admitted, about to be written over `live`) with its managedFields: the managers the
 * request carried (they may rewrite them; `[{}]` clears them) or else the live object's, and this
 * write recorded as an Update by its manager.
 */
export const trackWrite = (
  context: ObjectContext,
  request: ApiRequest,
  live: KubeObject | undefined,
  given: JsonObject,
  object: JsonObject,
  subresource: Subresource
): Effect.Effect<JsonObject, ApiFailure> =>
  Effect.gen(function* () {
    const writer = yield* writerFor(context.kind, yield* managerName(request), subresource)
    const incoming = metadataOf(given)["managedFields"]
    const liveEntries = managersOf(live)
    let entries = liveEntries
    // A subresource never rewrites managedFields; the main resource may, with entries it can read.
    if (subresource === "main" && isResetRequest(incoming)) entries = []
    else if (subresource === "main" && Array.isArray(incoming) && incoming.length > 0) {
      const decoded = decodeManagedFields(incoming)
      if (decoded.length > 0) entries = decoded
    }
    const after = effectiveObject(context.kind, live, object, subresource)
    const managers = recordUpdate(live, after, entries, writer)
    const encoded = encodeManagedFields(managers)
    return withMetadata(object, { managedFields: encoded.length === 0 ? undefined : encoded })
  })
