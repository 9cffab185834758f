import { Result, Schema, SchemaIssue } from "effect"
import { fieldPath } from "../api/invalidObject.ts"
import { NodeImageSpec } from "../api/nodeImage.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import type { Stored } from "../kube/store.ts"

/** The daemon's view of its NodeImage: the spec, with defaults (version 0, IfNotPresent) applied; or why it does not decode. */
export type SpecView = Result.Result<NodeImageSpec, string>

/** The NodeImage as the daemon's store holds it: the object and its decoded spec. */
export type StoredNodeImage = Stored<SpecView>

const decode = Schema.decodeUnknownResult(NodeImageSpec)
const format = SchemaIssue.makeFormatterStandardSchemaV1()

const decodeSpec = (raw: unknown): SpecView =>
  Result.mapError(decode(raw), (error) =>
    format(error.issue)
      .issues.map((issue) => `spec.${fieldPath((issue.path ?? []) as ReadonlyArray<PropertyKey>)}: ${issue.message}`)
      .join("; ")
  )

/**
 * The decoder of the daemon's NodeImage store (daemon.ts): each version's spec, decoded at the
 * store's edge. Status writes bring new versions with the same spec (the store keeps unchanged
 * parts the same objects), so a spec this decoder has seen is not decoded again.
 */
export const nodeImageSpecs = (): ((object: KubeObject) => SpecView) => {
  const seen = new WeakMap<object, SpecView>()
  return (object) => {
    const raw = object["spec"] ?? {}
    const key = typeof raw === "object" && raw !== null ? raw : object
    let decoded = seen.get(key)
    if (decoded === undefined) seen.set(key, (decoded = decodeSpec(raw)))
    return decoded
  }
}
