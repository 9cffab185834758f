import type { KubeObject } from "../../kube/KubeApi.ts"

interface NodeCondition {
  readonly type?: string
  readonly status?: string
  readonly lastTransitionTime?: string
}

/**
 * Since when (ms) the Node has been Ready, or undefined while it is not. A Ready node with no
 * transition time counts as ready since it was created.
 */
export const readySince = (node: KubeObject): number | undefined => {
  const status = node["status"] as { readonly conditions?: ReadonlyArray<NodeCondition> } | undefined
  const ready = status?.conditions?.find((c) => c.type === "Ready")
  if (ready?.status !== "True") return undefined
  const since = ready.lastTransitionTime ?? node.metadata.creationTimestamp
  return since === undefined ? 0 : Date.parse(since)
}
