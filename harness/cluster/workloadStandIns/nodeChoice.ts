// The dev cluster's scheduler decision: a Ready, schedulable node whose labels match the pod's
// nodeSelector and whose NoSchedule / NoExecute taints the pod tolerates, the one with the fewest
// pods (ties by name). No resources or affinity.
import { isNodeReady } from "./objects.ts"
import { untoleratedTaint } from "./taints.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"

export type NodeChoice = { readonly _tag: "Node"; readonly name: string } | { readonly _tag: "Unschedulable"; readonly message: string }

export const chooseNode = (
  nodeSelector: Readonly<Record<string, string>>,
  tolerations: unknown,
  nodes: ReadonlyArray<KubeObject>,
  podsOn: (node: string) => number
): NodeChoice => {
  let notReady = 0
  let cordoned = 0
  let mismatched = 0
  const tainted = new Map<string, number>()
  const fits: Array<{ name: string; pods: number }> = []
  for (const node of nodes) {
    const labels = node.metadata.labels ?? {}
    const nodeSpec = isPlainObject(node["spec"]) ? node["spec"] : {}
    if (!isNodeReady(node)) notReady++
    else if (nodeSpec["unschedulable"] === true) cordoned++
    else if (!Object.entries(nodeSelector).every(([k, v]) => labels[k] === v)) mismatched++
    else {
      const taint = untoleratedTaint(node, tolerations)
      if (taint !== undefined) tainted.set(taint, (tainted.get(taint) ?? 0) + 1)
      else fits.push({ name: node.metadata.name ?? "", pods: podsOn(node.metadata.name ?? "") })
    }
  }
  fits.sort((a, b) => a.pods - b.pods || a.name.localeCompare(b.name, "en", { numeric: true }))
  const best = fits[0]
  if (best !== undefined) return { _tag: "Node", name: best.name }
  // kube-scheduler's FailedScheduling wording.
  const reasons = [
    mismatched > 0 ? `${mismatched} node(s) didn't match Pod's node affinity/selector` : undefined,
    notReady > 0 ? `${notReady} node(s) had untolerated taint {node.kubernetes.io/not-ready: }` : undefined,
    cordoned > 0 ? `${cordoned} node(s) were unschedulable` : undefined,
    ...[...tainted].map(([taint, count]) => `${count} node(s) had untolerated taint ${taint}`)
  ].filter((r) => r !== undefined)
  return { _tag: "Unschedulable", message: `0/${nodes.length} nodes are available: ${reasons.join(", ")}.` }
}
