import type { KubeObject } from "../../src/kube/KubeApi.ts"

const zones = ["zone-a", "zone-b", "zone-c"] as const
const pools = ["general", "general", "gpu"] as const

/**
 * The simulated nodes of `preheat dev`: names node-1..N and labels that vary (zone, arch, pool)
 * so that label selectors in the examples mean something.
 */
export const devNode = (index: number): KubeObject => {
  const name = `node-${index + 1}`
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": index % 4 === 3 ? "arm64" : "amd64",
        "topology.kubernetes.io/zone": zones[index % zones.length]!,
        "node-pool": pools[index % pools.length]!
      }
    }
  }
}

/** A Ready condition, as the kubelet reports it, for the status subresource. */
export const readyStatus = (since: string) => ({
  status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", lastTransitionTime: since }] }
})
