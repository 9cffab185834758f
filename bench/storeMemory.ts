/**
 * npm run bench:stores -- [--objects N] [--images I] [--tags T]
 *
 * The heap one Node and one NodeImage cost the controller, from the wire: N of each as JSON text (a
 * Node as a kubelet reports it, with I images on the node and the usual conditions, addresses,
 * nodeInfo, annotations and managedFields; a NodeImage with T tags of T jobs and each node's
 * outcome, as the daemons write them), parsed as a live client does. Printed per object, after a
 * full GC: what the parsed list holds (what a client that reads a list whole holds at start-up; the
 * controller's lists keep each page as its store does, ListOptions.transform), what the
 * controller's store holds of it (controller/stores.ts), and what a plain store
 * (every field, each object on its own) holds, for comparison. Heap figures do not depend on the
 * machine's load.
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { controllerStores } from "../src/controller/stores.ts"
import { nodeImageView } from "../src/controller/nodeImage/view.ts"
import type { KubeObject } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { makeStore } from "../src/kube/store.ts"

const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "10000" },
    images: { type: "string", default: "50" },
    tags: { type: "string", default: "10" }
  }
})
const count = Number(values.objects)
const imagesOnNode = Number(values.images)
const tags = Number(values.tags)
const gc = (globalThis as { gc?: (options?: object) => void }).gc
if (gc === undefined) throw new Error("run node with --expose-gc")

const hex = (i: number, width: number) => i.toString(16).padStart(width, "0")
const uid = (kind: string, i: number) => `${hex(i, 8)}-${kind === "Node" ? "6e6f" : "6e69"}-4d65-8000-${hex(i * 7919, 12)}`
const time = (second: number) => new Date(Date.UTC(2026, 11, 6, 0, 0, second)).toISOString().replace(".000", "")
const zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]

/** A Node as kubectl get node -o json shows one of a managed node group (names and figures vary per node). */
const nodeText = (i: number): string => {
  const name = `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`
  const heartbeat = time(3600 + (i % 60))
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: time(i % 600),
    reason,
    message
  })
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      uid: uid("Node", i),
      resourceVersion: String(1_000_000 + i),
      creationTimestamp: time(i % 600),
      labels: {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": "m6i.xlarge",
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": "general",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m6i.xlarge",
        "topology.kubernetes.io/region": "eu-west-1",
        "topology.kubernetes.io/zone": zones[i % 3]
      },
      annotations: {
        "alpha.kubernetes.io/provided-node-ip": `10.0.${i >> 8}.${i & 255}`,
        "csi.volume.kubernetes.io/nodeid": `{"ebs.csi.aws.com":"i-0${hex(i, 16)}"}`,
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true"
      },
      managedFields: ["kubelet", "kube-controller-manager", "aws-node"].map((manager) => ({
        manager,
        operation: "Update",
        apiVersion: "v1",
        time: heartbeat,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:kubernetes.io/hostname": {} } }, "f:status": { "f:conditions": {} } },
        ...(manager === "kubelet" ? { subresource: "status" } : {})
      }))
    },
    spec: { providerID: `aws:///${zones[i % 3]}/i-0${hex(i, 16)}`, podCIDR: `10.1.${i >> 8}.0/24` },
    status: {
      capacity: { cpu: "4", "ephemeral-storage": "83873772Ki", memory: "16044812Ki", pods: "58" },
      allocatable: { cpu: "3920m", "ephemeral-storage": "76224326324", memory: "15027980Ki", pods: "58" },
      conditions: [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
      ],
      addresses: [
        { type: "InternalIP", address: `10.0.${i >> 8}.${i & 255}` },
        { type: "InternalDNS", address: name },
        { type: "Hostname", address: name }
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i * 104729, 32),
        systemUUID: `ec2${hex(i, 5)}-0000-0000-0000-${hex(i, 12)}`,
        bootID: uid("boot", i),
        kernelVersion: "6.1.119-129.201.amzn2023.x86_64",
        osImage: "Amazon Linux 2023.6.20241212",
        containerRuntimeVersion: "containerd://1.7.23",
        kubeletVersion: "v1.31.3-eks-59bf375",
        kubeProxyVersion: "v1.31.3-eks-59bf375",
        operatingSystem: "linux",
        architecture: "amd64"
      },
      images: Array.from({ length: imagesOnNode }, (_, k) => ({
        names: [
          `602401143452.dkr.ecr.eu-west-1.amazonaws.com/team-${k}/service@sha256:${hex(k * 31337, 64)}`,
          `602401143452.dkr.ecr.eu-west-1.amazonaws.com/team-${k}/service:v1.${k}.0`
        ],
        sizeBytes: 10_000_000 + k * 1_234_567
      }))
    }
  })
}

/** A NodeImage with `tags` jobs' tags, each pulled: written by the controller, reported by the node's daemon. */
const nodeImageText = (i: number): string => {
  const node = `ip-10-0-${i >> 8}-${i & 255}.eu-west-1.compute.internal`
  const image = (j: number) => `602401143452.dkr.ecr.eu-west-1.amazonaws.com/team-${j}/service`
  const wave = Math.floor(i / 100)
  const images: Record<string, unknown> = {}
  const statuses: Record<string, unknown> = {}
  for (let j = 0; j < tags; j++) {
    images[image(j)] = {
      tags: [
        {
          tag: `v1.${j}.1`,
          createdAt: time(wave + j),
          pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 2280 + 60 * (i % 6) },
          ownerReferences: [
            { apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", name: `job-${j}`, namespace: "default", uid: uid("job", j) }
          ],
          version: 0,
          imagePullPolicy: "Always"
        }
      ]
    }
    statuses[image(j)] = {
      tags: [
        {
          tag: `v1.${j}.1`,
          phase: "Succeeded",
          version: 0,
          progress: 100,
          startTime: time(wave + j),
          completionTime: time(wave + j + 1 + (i % 2)),
          imageID: `sha256:${hex(j * 7, 64)}`,
          digest: `sha256:${hex(j * 13, 64)}`,
          message: `pulled image "${image(j)}:v1.${j}.1" on node ${node} in ${(0.8 + (i % 40) / 100).toFixed(2)}s`
        }
      ]
    }
  }
  return JSON.stringify({
    apiVersion: "apps.kruise.io/v1beta1",
    kind: "NodeImage",
    metadata: {
      name: node,
      uid: uid("NodeImage", i),
      resourceVersion: String(2_000_000 + i),
      generation: 1 + tags,
      creationTimestamp: time(i % 600),
      labels: { "kubernetes.io/hostname": node, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": zones[i % 3]! }
    },
    spec: { images },
    status: { desired: tags, pulling: 0, waiting: 0, succeeded: tags, failed: 0, imageStatuses: statuses }
  })
}

const heap = async (): Promise<number> => {
  // Both a turn of the event loop and a last-resort collection: with either alone, the store
  // measured before was still alive (held from Effect's runtime or V8's caches, not found which).
  await new Promise((done) => setImmediate(done))
  gc?.({ type: "major", execution: "sync", flavor: "last-resort" })
  return process.memoryUsage().heapUsed
}

interface Listed {
  readonly listed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
}

/**
 * The parsed objects, or the store `make` gives once it listed them. In a frame of its own, and
 * the store made here: nothing the measuring frames hold (their stack slots included) may keep
 * the parsed list or a store alive across the next measurement.
 */
const load = (texts: ReadonlyArray<string>, make: (() => Listed) | undefined): unknown => {
  const objects = texts.map((text) => JSON.parse(text) as KubeObject)
  if (make === undefined) return objects
  const store = make()
  Effect.runSync(store.listed(objects))
  return store
}

/** Heap per object, in KiB, of N freshly parsed objects, or of what the store `make` gives holds of them. */
const perObject = async (texts: ReadonlyArray<string>, make?: () => Listed): Promise<string> => {
  const before = await heap()
  // Held across the measurement, let go after it.
  const held = [load(texts, make)]
  const after = await heap()
  held.length = 0
  return ((after - before) / 1024 / texts.length).toFixed(2)
}

const report = async (kind: string, text: (i: number) => string, controllerStore: () => Listed, plain: () => Listed) => {
  const texts = Array.from({ length: count }, (_, i) => text(i))
  const bytes = texts.reduce((sum, t) => sum + t.length, 0) / count
  console.log(
    [
      `bench:storeMemory kind=${kind} objects=${count}`,
      `json_kib=${(bytes / 1024).toFixed(2)}`,
      `parsed_kib=${await perObject(texts)}`,
      `plain_store_kib=${await perObject(texts, plain)}`,
      `controller_store_kib=${await perObject(texts, controllerStore)}`
    ].join(" ")
  )
}

console.log(`images_on_node=${imagesOnNode} tags=${tags}`)
await report(
  "Node",
  nodeText,
  () => controllerStores().nodes,
  () => makeStore(resources.node)
)
await report(
  "NodeImage",
  nodeImageText,
  () => controllerStores().nodeImages,
  () => makeStore(resources.nodeImage, { decode: nodeImageView, specFollowsGeneration: true })
)
