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
 * parts the same objects), so the spec decoded last is not decoded again.
 *
 * Only the last one is remembered (one decoded spec per daemon, whatever its size): a daemon
 * watches one NodeImage and never goes back to an older spec. Remembered for as long as each spec
 * lived (a WeakMap), the decoded copies followed every version the embedded API server's watch
 * history held (10,000 NodeImage versions): in `preheat dev`, whose daemons receive the stored
 * objects themselves, 500 images on 3 nodes kept about 400 MB of decoded specs alive (issue 24).
 */
export const nodeImageSpecs = (): ((object: KubeObject) => SpecView) => {
  let lastKey: object | undefined
  let last: SpecView | undefined
  return (object) => {
    const raw = object["spec"] ?? {}
    const key = typeof raw === "object" && raw !== null ? raw : object
    if (key !== lastKey || last === undefined) {
      last = decodeSpec(raw)
      lastKey = key
    }
    return last
  }
}
