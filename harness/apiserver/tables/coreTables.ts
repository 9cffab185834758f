// The tables kube-apiserver prints for the built-in kinds this server serves (the columns of
// k8s.io/kubernetes pkg/printers), computed from the fields those kinds carry here.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { ageOf } from "./age.ts"
import { jsonPathValue } from "./printerColumns.ts"
import { column, nameColumn } from "./table.ts"
import type { TableConvertor } from "./table.ts"

export const age = column("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object was created.")

const at = (object: KubeObject, path: string): unknown => jsonPathValue(object, path)
const str = (value: unknown, fallback = "<none>"): string => (typeof value === "string" && value !== "" ? value : fallback)
const list = (value: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(value) ? (value.filter(isPlainObject) as Array<Record<string, unknown>>) : []
export const created = (object: KubeObject, now: number) => ageOf(object.metadata.creationTimestamp, now)

export const namespaceTable: TableConvertor = {
  columns: [nameColumn, column("Status", "string", "The status of the namespace"), age],
  cells: (object, now) => [object.metadata.name ?? "", str(at(object, ".status.phase"), ""), created(object, now)]
}

const nodeStatus = (object: KubeObject): string => {
  const ready = list(at(object, ".status.conditions")).find((c) => c["type"] === "Ready")
  const status =
    ready === undefined ? "Unknown" : ready["status"] === "True" ? "Ready" : ready["status"] === "False" ? "NotReady" : "Unknown"
  return at(object, ".spec.unschedulable") === true ? `${status},SchedulingDisabled` : status
}

const nodeRoles = (object: KubeObject): string => {
  const roles = new Set<string>()
  for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
    if (key.startsWith("node-role.kubernetes.io/") && key.length > "node-role.kubernetes.io/".length) {
      roles.add(key.slice("node-role.kubernetes.io/".length))
    } else if (key === "kubernetes.io/role" && value !== "") {
      roles.add(value)
    }
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",")
}

const nodeAddress = (object: KubeObject, type: string): string =>
  str(list(at(object, ".status.addresses")).find((a) => a["type"] === type)?.["address"])

export const nodeTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    age,
    column("Version", "string", "Kubelet Version reported by the node."),
    column("Internal-IP", "string", "List of addresses reachable to the node. Queried from cloud provider, if available.", { priority: 1 }),
    column("External-IP", "string", "List of addresses reachable to the node. Queried from cloud provider, if available.", { priority: 1 }),
    column("OS-Image", "string", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", { priority: 1 }),
    column("Kernel-Version", "string", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", { priority: 1 }),
    column(
      "Container-Runtime",
      "string",
      "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
      { priority: 1 }
    )
  ],
  cells: (object, now) => [
    object.metadata.name ?? "",
    nodeStatus(object),
    nodeRoles(object),
    created(object, now),
    str(at(object, ".status.nodeInfo.kubeletVersion"), ""),
    nodeAddress(object, "InternalIP"),
    nodeAddress(object, "ExternalIP"),
    str(at(object, ".status.nodeInfo.osImage"), "<unknown>"),
    str(at(object, ".status.nodeInfo.kernelVersion"), "<unknown>"),
    str(at(object, ".status.nodeInfo.containerRuntimeVersion"), "<unknown>")
  ]
}

// The pod's STATUS as kubectl shows it: a container's waiting or terminated reason beats the phase.
const podStatus = (object: KubeObject): string => {
  if (object.metadata.deletionTimestamp !== undefined) return "Terminating"
  let reason = str(at(object, ".status.reason"), str(at(object, ".status.phase"), "Unknown"))
  for (const container of list(at(object, ".status.containerStatuses"))) {
    const state = isPlainObject(container["state"]) ? container["state"] : {}
    const waiting = isPlainObject(state["waiting"]) ? state["waiting"] : undefined
    const terminated = isPlainObject(state["terminated"]) ? state["terminated"] : undefined
    if (waiting !== undefined && typeof waiting["reason"] === "string" && waiting["reason"] !== "") reason = waiting["reason"]
    else if (terminated !== undefined && typeof terminated["reason"] === "string" && terminated["reason"] !== "")
      reason = terminated["reason"]
  }
  return reason
}

export const podTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "string", "The aggregate status of the containers in this pod."),
    column(
      "Restarts",
      "string",
      "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."
    ),
    age,
    column("IP", "string", "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", {
      priority: 1
    }),
    column("Node", "string", "Name of the Node this pod is scheduled onto.", { priority: 1 }),
    column("Nominated Node", "string", "nominatedNodeName is set only when this pod preempts other pods on the node.", { priority: 1 }),
    column("Readiness Gates", "string", "If specified, all readiness gates will be evaluated for pod readiness.", { priority: 1 })
  ],
  cells: (object, now) => {
    const statuses = list(at(object, ".status.containerStatuses"))
    const ready = statuses.filter((s) => s["ready"] === true).length
    const restarts = statuses.reduce((sum, s) => sum + (typeof s["restartCount"] === "number" ? s["restartCount"] : 0), 0)
    return [
      object.metadata.name ?? "",
      `${ready}/${list(at(object, ".spec.containers")).length}`,
      podStatus(object),
      String(restarts),
      created(object, now),
      str(at(object, ".status.podIP")),
      str(at(object, ".spec.nodeName")),
      str(at(object, ".status.nominatedNodeName")),
      "<none>"
    ]
  }
}

export const secretTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Type", "string", "The type of the secret"),
    column("Data", "string", "The number of entries in the secret"),
    age
  ],
  cells: (object, now) => {
    const data = at(object, ".data")
    return [
      object.metadata.name ?? "",
      str(at(object, ".type"), "Opaque"),
      isPlainObject(data) ? Object.keys(data).length : 0,
      created(object, now)
    ]
  }
}

export const configMapTable: TableConvertor = {
  columns: [nameColumn, column("Data", "string", "The number of entries in the configmap"), age],
  cells: (object, now) => {
    const data = at(object, ".data")
    const binary = at(object, ".binaryData")
    const count = (isPlainObject(data) ? Object.keys(data).length : 0) + (isPlainObject(binary) ? Object.keys(binary).length : 0)
    return [object.metadata.name ?? "", count, created(object, now)]
  }
}

const eventLastSeen = (object: KubeObject): unknown =>
  at(object, ".series.lastObservedTime") ?? at(object, ".lastTimestamp") ?? at(object, ".eventTime") ?? object.metadata.creationTimestamp

export const eventTable: TableConvertor = {
  columns: [
    column("Last Seen", "string", "The last time this event was seen."),
    column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future."),
    column(
      "Reason",
      "string",
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
    ),
    column("Object", "string", "The object that this event is about."),
    column("Message", "string", "A human-readable description of the status of this operation."),
    column("Subobject", "string", "The field of the object that this event is about.", { priority: 1 }),
    column("Source", "string", "The component reporting this event.", { priority: 1 }),
    column("First Seen", "string", "The first time this event was seen.", { priority: 1 }),
    column("Count", "string", "The number of times this event has occurred.", { priority: 1 }),
    { ...nameColumn, priority: 1 }
  ],
  cells: (object, now) => [
    ageOf(eventLastSeen(object), now),
    str(at(object, ".type"), ""),
    str(at(object, ".reason"), ""),
    `${str(at(object, ".involvedObject.kind"), "").toLowerCase()}/${str(at(object, ".involvedObject.name"), "")}`,
    str(at(object, ".message"), ""),
    str(at(object, ".involvedObject.fieldPath"), ""),
    str(at(object, ".source.component"), str(at(object, ".reportingComponent"), "")),
    ageOf(at(object, ".firstTimestamp") ?? at(object, ".eventTime") ?? object.metadata.creationTimestamp, now),
    String(at(object, ".series.count") ?? at(object, ".count") ?? 1),
    object.metadata.name ?? ""
  ]
}

export const leaseTable: TableConvertor = {
  columns: [nameColumn, column("Holder", "string", "The holder of the lease"), age],
  cells: (object, now) => [object.metadata.name ?? "", str(at(object, ".spec.holderIdentity"), ""), created(object, now)]
}

/** The default table of kube-apiserver (rest.NewDefaultTableConvertor), which CustomResourceDefinitions have. */
export const definitionTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Created At", "date", "CreationTimestamp is a timestamp representing the server time when this object was created.")
  ],
  cells: (object) => [object.metadata.name ?? "", object.metadata.creationTimestamp ?? ""]
}
