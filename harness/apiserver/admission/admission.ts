// What happens to an object between the request body and the store, as in kube-apiserver:
// decoding (unknown fields pruned, or rejected under fieldValidation=Strict), the CRD's defaults,
// its schema and CEL validation, and the built-in admission this server needs. The store then
// adds what it owns (uid, resourceVersion, generation, timestamps) and checks metadata.
import { Result } from "effect"
import { escapeForeignText } from "../../../src/api/goQuote.ts"
import { ApiFailure, badRequest, invalidFailure } from "../http/apiStatus.ts"
import { builtinDefaults } from "./builtinDefaults.ts"
import type { ServedKind } from "../catalog.ts"
import { celViolations } from "./celRules.ts"
import { decoderCauses } from "./decoderAdmission.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { quote } from "../storage/storeErrors.ts"
import type { Cause } from "../storage/storeErrors.ts"
import { applyDefaults, prune, schemaViolations } from "./structuralSchema.ts"
import type { StructuralSchema } from "./structuralSchema.ts"
import { workloadCauses } from "./workloadRules.ts"
import { definitionDeletionRefusal, definitionWriteRefusal } from "./fixedDefinitions.ts"
import { namespaceDeletionRefusal } from "./namespaceLifecycle.ts"

/** The `fieldValidation` query parameter: what to do with fields the schema does not declare. */
export type FieldValidation = "Strict" | "Warn" | "Ignore"

export const parseFieldValidation = (value: string | null): FieldValidation | undefined =>
  value === null || value === "" ? "Warn" : value === "Strict" || value === "Warn" || value === "Ignore" ? value : undefined

export interface AdmissionOptions {
  readonly fieldValidation: FieldValidation
  readonly operation: "create" | "update" | "patch"
  /** The part of the object this write changes. */
  readonly subresource: "main" | "status"
  /**
   * Also reject what the controller would mark invalid (image references, selectors...), with the
   * project's own decoders, as a validating admission webhook would.
   */
  readonly decoderAdmission: boolean
  /** The stored object an update or patch replaces: what it leaves as it was is not validated again. */
  readonly old?: JsonObject | undefined
}

export interface Admitted {
  readonly object: Record<string, unknown>
  /** `Warning` headers for the client (unknown fields dropped under fieldValidation=Warn). */
  readonly warnings: ReadonlyArray<string>
}

const objectMetaFields: ReadonlySet<string> = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields"
])
const ownerReferenceFields: ReadonlySet<string> = new Set(["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"])

/**
 * ObjectMeta is a Go struct on every server: its unknown fields are dropped (reported), nulls read
 * as absent, and managedFields, which this server does not track, are dropped silently.
 */
const pruneMetadata = (metadata: unknown, unknown: Array<string>): unknown => {
  if (!isPlainObject(metadata)) return metadata
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(metadata)) {
    if (!objectMetaFields.has(key)) unknown.push(`metadata.${key}`)
    else if (value !== null && key !== "managedFields") out[key] = value
  }
  const owners = out["ownerReferences"]
  if (Array.isArray(owners)) {
    out["ownerReferences"] = owners.map((ref, i) => {
      if (!isPlainObject(ref)) return ref
      const kept: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(ref)) {
        if (ownerReferenceFields.has(key)) kept[key] = value
        else unknown.push(`metadata.ownerReferences[${i}].${key}`)
      }
      return kept
    })
  }
  return out
}

const strictError = (kind: ServedKind, operation: AdmissionOptions["operation"], unknown: ReadonlyArray<string>): ApiFailure => {
  const fields = unknown.map((path) => `unknown field ${quote(path)}`).join(", ")
  const { kind: name, apiVersion } = kind.resource
  const version = apiVersion.slice(apiVersion.indexOf("/") + 1)
  return badRequest(
    operation === "patch"
      ? `strict decoding error: ${fields}`
      : `${name} in version ${quote(version)} cannot be handled as a ${name}: strict decoding error: ${fields}`
  )
}

// The schema's own rules and then its CEL rules, for the part of the object the write changes.
const validationCauses = (
  schema: StructuralSchema,
  object: JsonObject,
  subresource: AdmissionOptions["subresource"],
  old: JsonObject | undefined
): Array<Cause> => {
  const scoped: StructuralSchema = {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(schema.properties ?? {}).filter(([key]) => key !== "metadata" && (subresource === "status") === (key === "status"))
    ),
    required: (schema.required ?? []).filter((key) => (subresource === "status") === (key === "status"))
  }
  const causes = schemaViolations(scoped, object, "", old)
  for (const violation of celViolations(scoped, object, "", old)) {
    causes.push({ field: violation.path, message: `Invalid value: ${quote(violation.type)}: ${violation.message}` })
  }
  return causes
}

const nameOf = (object: JsonObject): string => {
  const metadata = object["metadata"]
  return isPlainObject(metadata) && typeof metadata["name"] === "string" ? metadata["name"] : ""
}

export const admit = (kind: ServedKind, input: unknown, options: AdmissionOptions): Result.Result<Admitted, ApiFailure> => {
  if (!isPlainObject(input)) return Result.fail(badRequest("the request body must be a JSON object"))
  const { apiVersion, kind: kindName } = kind.resource
  if (input["apiVersion"] !== undefined && input["apiVersion"] !== apiVersion) {
    return Result.fail(
      // kube-apiserver's words, which do not quote the value: escaped and bounded instead.
      badRequest(
        `the API version in the data (${escapeForeignText(String(input["apiVersion"]))}) does not match the expected API version (${apiVersion})`
      )
    )
  }
  if (input["kind"] !== undefined && input["kind"] !== kindName) {
    return Result.fail(
      badRequest(`the kind in the data (${escapeForeignText(String(input["kind"]))}) does not match the expected kind (${kindName})`)
    )
  }
  const unknown: Array<string> = []
  const { apiVersion: _a, kind: _k, metadata, ...body } = input
  let rest: Record<string, unknown> = body
  const schema = kind.structural
  if (schema !== undefined) {
    const { properties = {} } = schema
    const { apiVersion: _pa, kind: _pk, metadata: _pm, ...bodyProperties } = properties
    const pruned = prune({ ...schema, properties: bodyProperties, required: [] }, body)
    unknown.push(...pruned.unknown)
    rest = pruned.value as Record<string, unknown>
  }
  let object: Record<string, unknown> = { apiVersion, kind: kindName, metadata: pruneMetadata(metadata ?? {}, unknown), ...rest }
  if (unknown.length > 0 && options.fieldValidation === "Strict") return Result.fail(strictError(kind, options.operation, unknown))
  const warnings = options.fieldValidation === "Warn" ? unknown.map((path) => `unknown field ${quote(path)}`) : []
  if (schema !== undefined) {
    object = applyDefaults(schema, object) as Record<string, unknown>
    const causes = validationCauses(schema, object, options.subresource, options.old)
    if (causes.length > 0) return Result.fail(invalidFailure(kind, nameOf(object), causes))
    if (options.decoderAdmission && options.subresource === "main") {
      const denied = decoderCauses(kind, object)
      if (denied.length > 0) {
        const failure = invalidFailure(kind, nameOf(object), denied)
        return Result.fail(
          new ApiFailure({
            ...failure,
            message: `admission webhook "validate.preheat.apps.kruise.io" denied the request: ${failure.message}`
          })
        )
      }
    }
  }
  const defaulted = builtinDefaults(kind, object, options.operation)
  if (kind.group === "apps" && options.subresource === "main") {
    const causes = workloadCauses(kind.resource.kind, defaulted)
    if (causes.length > 0) return Result.fail(invalidFailure(kind, nameOf(defaulted), causes))
  }
  const fixed = definitionWriteRefusal(kind, defaulted, options.subresource)
  if (fixed !== undefined) return Result.fail(fixed)
  return Result.succeed({ object: defaulted, warnings })
}

/** Why an object may not be deleted at all (the initial namespaces, the served definitions), if it may not. */
export const deletionRefusal = (kind: ServedKind, name: string): ApiFailure | undefined =>
  namespaceDeletionRefusal(kind, name) ?? definitionDeletionRefusal(kind, name)
