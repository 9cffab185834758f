import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defaultWarmTaintKey, removeWarmTaint } from "../../src/api/warmTaint.ts"
import { readySince } from "../../src/controller/nodeImage/nodeReadiness.ts"
import { nodeAsRead } from "../../src/controller/nodeFields.ts"
import { controllerStores } from "../../src/controller/stores.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

/** A Node as a kubelet and the control plane leave it (kubectl get node -o json, shortened). */
const kubeletNode = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: {
    name,
    uid: `uid-${name}`,
    resourceVersion,
    creationTimestamp: "2026-12-01T10:00:00Z",
    labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": "zone-a" },
    annotations: {
      "node.alpha.kubernetes.io/ttl": "0",
      "volumes.kubernetes.io/controller-managed-attach-detach": "true",
      "csi.volume.kubernetes.io/nodeid": `{"ebs.csi.aws.com":"i-0${name}"}`
    }
  },
  spec: {
    podCIDR: "10.0.1.0/24",
    providerID: `aws:///eu-west-1a/i-0${name}`,
    taints: [
      { key: defaultWarmTaintKey, effect: "NoSchedule" },
      { key: "dedicated", value: "gpu", effect: "NoSchedule" }
    ]
  },
  status: {
    conditions: [
      { type: "MemoryPressure", status: "False", lastHeartbeatTime: "2026-12-06T01:00:00Z", reason: "KubeletHasSufficientMemory" },
      {
        type: "Ready",
        status: "True",
        lastHeartbeatTime: "2026-12-06T01:00:00Z",
        lastTransitionTime: "2026-12-01T10:01:00Z",
        reason: "KubeletReady",
        message: "kubelet is posting ready status"
      }
    ],
    addresses: [{ type: "InternalIP", address: "10.0.1.17" }],
    capacity: { cpu: "4", memory: "16132340Ki", pods: "110" },
    nodeInfo: { kubeletVersion: "v1.33.1", containerRuntimeVersion: "containerd://2.0.5", osImage: "Bottlerocket OS 1.39.0" },
    images: [{ names: ["registry.k8s.io/pause@sha256:0123", "registry.k8s.io/pause:3.10"], sizeBytes: 320368 }]
  }
})

describe("what the controller keeps of a Node", () => {
  it("identity, labels, taints and the Ready condition; not the images, addresses, nodeInfo, other conditions, annotations", () => {
    const node = kubeletNode("n1", "7")
    const kept = nodeAsRead(node)
    expect(kept).toEqual({
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: "n1",
        uid: "uid-n1",
        resourceVersion: "7",
        creationTimestamp: "2026-12-01T10:00:00Z",
        labels: node.metadata.labels
      },
      spec: { taints: (node["spec"] as { taints: unknown }).taints },
      status: { conditions: [(node["status"] as { conditions: Array<unknown> }).conditions[1]] }
    })
    // What the controller reads of it reads the same from what is kept.
    expect(readySince(kept)).toBe(readySince(node))
    expect(removeWarmTaint(kept, defaultWarmTaintKey)).toEqual(removeWarmTaint(node, defaultWarmTaintKey))
    expect(nodeAsRead({ metadata: { name: "bare" } })).toEqual({ metadata: { name: "bare" } })
  })

  it("is what the controller's Node store holds, from a list and from its own write's answer, indexed by taint", () => {
    const { nodes } = controllerStores()
    Effect.runSync(nodes.listed([kubeletNode("n1", "1"), kubeletNode("n2", "2")]))
    Effect.runSync(nodes.written(kubeletNode("n1", "3")))
    expect(nodes.get("n1")).toEqual(nodeAsRead(kubeletNode("n1", "3")))
    expect(nodes.get("n2")).not.toHaveProperty("status.images")
    expect([...nodes.indexes.taints.keys(defaultWarmTaintKey)]).toEqual(["n1", "n2"])
  })
})
