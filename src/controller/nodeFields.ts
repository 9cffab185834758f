// What the controller reads of a Node: the only parts its Node store keeps, as client-go's informer
// transforms (SetTransform) and controller-runtime's cache transforms keep a cache to what is read.
import type { KubeObject } from "../kube/KubeApi.ts"

/**
 * A Node as the controller's store holds it: apiVersion, kind and metadata but its annotations
 * (identity and version for writes and events; labels, which NodeImages copy and jobs select
 * by), spec.taints whole (the startup taint and the NoSchedule index: nodeWarming/, whose patch
 * tests the taints as stored) and the Ready condition (nodeImage/nodeReadiness.ts). Everything else
 * a kubelet reports is left out: status.images (every image on the node, names and sizes),
 * addresses, nodeInfo, capacity and allocatable, the other conditions with their heartbeat times,
 * annotations: most of a real Node's 5 to 30 KiB of JSON, for each of up to 100,000 nodes, and
 * none of it read. A reader of another field adds it here (test/controller/nodeFields.test.ts).
 * The store is never written back whole (the taint is removed by a JSON patch of spec.taints).
 */
export const nodeAsRead = (node: KubeObject): KubeObject => {
  const { annotations: _, ...metadata } = node.metadata
  const spec = node["spec"] as { readonly taints?: unknown } | undefined
  const status = node["status"] as { readonly conditions?: unknown } | undefined
  const conditions = status?.conditions
  return {
    ...(node.apiVersion === undefined ? {} : { apiVersion: node.apiVersion }),
    ...(node.kind === undefined ? {} : { kind: node.kind }),
    metadata,
    ...(spec?.taints === undefined ? {} : { spec: { taints: spec.taints } }),
    ...(Array.isArray(conditions) ? { status: { conditions: conditions.filter(isReady) } } : {})
  }
}

const isReady = (condition: unknown): boolean =>
  typeof condition === "object" && condition !== null && (condition as { readonly type?: unknown }).type === "Ready"
