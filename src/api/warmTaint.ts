// The startup taint preheat lifts once a node is warm: reading it, and the conditional write
// that removes it and nothing else.

/** A Node as these functions read it (any stored object: the taints are under spec). */
type NodeObject = { readonly [field: string]: unknown }

/** The JSON patch operations these writes use (a subset of KubeApi's JsonPatchOperation). */
type TaintPatch = ReadonlyArray<{ readonly op: "test" | "replace"; readonly path: string; readonly value: unknown }>

/** A Node's taint, as core/v1 has it. */
export interface Taint {
  readonly key: string
  readonly value?: string
  readonly effect: string
  readonly timeAdded?: string
}

/** preheat's default startup taint key (`--warm-taint-key`). */
export const defaultWarmTaintKey = "preheat.kruise.io/warming"

/** The key prefix the cluster autoscaler (1.29 and later) treats as a startup taint, besides the keys of its `--startup-taint`. */
export const autoscalerStartupTaintPrefix = "startup-taint.cluster-autoscaler.kubernetes.io/"

const isTaint = (value: unknown): value is Taint =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Record<string, unknown>)["key"] === "string" &&
  typeof (value as Record<string, unknown>)["effect"] === "string"

/** The Node's taints as they are stored (entries that are no taint are kept by the write, never read). */
const taintsOf = (node: NodeObject): ReadonlyArray<unknown> => {
  const spec = node["spec"] as { readonly taints?: unknown } | undefined
  return Array.isArray(spec?.taints) ? spec.taints : []
}

/** preheat owns exactly one taint: its key with effect NoSchedule; the same key with another effect is someone else's. */
const owned = (taint: unknown, key: string): boolean => isTaint(taint) && taint.key === key && taint.effect === "NoSchedule"

/** Whether the Node carries preheat's startup taint. */
export const carriesWarmTaint = (node: NodeObject, key: string): boolean => taintsOf(node).some((t) => owned(t, key))

/** The keys of the Node's NoSchedule taints (for the nodes store's index). */
export const noScheduleTaintKeys = (node: NodeObject): Array<string> =>
  taintsOf(node).flatMap((t) => (isTaint(t) && t.effect === "NoSchedule" ? [t.key] : []))

/**
 * The JSON patch that removes preheat's taint and keeps every other one, conditional on the taints
 * being those read: a taint another writer adds or removes at the same moment makes the `test`
 * fail (a Conflict), and the removal is decided again on the newer Node, so no write is lost.
 */
export const removeWarmTaint = (node: NodeObject, key: string): TaintPatch => {
  const taints = taintsOf(node)
  return [
    { op: "test", path: "/spec/taints", value: taints },
    { op: "replace", path: "/spec/taints", value: taints.filter((t) => !owned(t, key)) }
  ]
}
