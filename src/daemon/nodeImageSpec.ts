import { Result, Schema, SchemaIssue } from "effect"
import { fieldPath } from "../api/invalidObject.ts"
import { NodeImageSpec } from "../api/nodeImage.ts"
import type { KubeObject } from "../kube/KubeApi.ts"

const decode = Schema.decodeUnknownResult(NodeImageSpec)
const format = SchemaIssue.makeFormatterStandardSchemaV1()

const cache = new WeakMap<object, Result.Result<NodeImageSpec, string>>()

/**
 * The spec of a stored NodeImage, with defaults (version 0, IfNotPresent) applied; or why it does
 * not decode. Cached per stored object: status writes bring new objects with the same spec.
 */
export const nodeImageSpec = (object: KubeObject): Result.Result<NodeImageSpec, string> => {
  const raw = object["spec"] ?? {}
  const key = typeof raw === "object" && raw !== null ? raw : object
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  const decoded = Result.mapError(decode(raw), (error) =>
    format(error.issue)
      .issues.map((issue) => `spec.${fieldPath((issue.path ?? []) as ReadonlyArray<PropertyKey>)}: ${issue.message}`)
      .join("; ")
  )
  cache.set(key, decoded)
  return decoded
}
