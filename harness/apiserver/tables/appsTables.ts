// The tables kube-apiserver prints for the apps/v1 workload kinds (the columns of
// k8s.io/kubernetes pkg/printers/internalversion), computed from the fields they carry here.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { age, created } from "./coreTables.ts"
import { jsonPathValue } from "./printerColumns.ts"
import { column, nameColumn } from "./table.ts"
import type { TableConvertor } from "./table.ts"

const containersColumn = column("Containers", "string", "Names of each container in the template.", { priority: 1 })
const imagesColumn = column("Images", "string", "Images referenced by each container in the template.", { priority: 1 })
const selectorColumn = column(
  "Selector",
  "string",
  "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
  { priority: 1 }
)

const count = (object: KubeObject, path: string): number => {
  const value = jsonPathValue(object, path)
  return typeof value === "number" ? value : 0
}

const templateContainers = (object: KubeObject): ReadonlyArray<Record<string, unknown>> => {
  const containers = jsonPathValue(object, ".spec.template.spec.containers")
  return Array.isArray(containers) ? (containers.filter(isPlainObject) as Array<Record<string, unknown>>) : []
}

const names = (object: KubeObject) =>
  templateContainers(object)
    .map((c) => String(c["name"] ?? ""))
    .join(",")
const images = (object: KubeObject) =>
  templateContainers(object)
    .map((c) => String(c["image"] ?? ""))
    .join(",")

// kubectl's form of a label selector: `a=b,c in (d,e),!f`.
const selectorText = (object: KubeObject): string => {
  const selector = jsonPathValue(object, ".spec.selector")
  if (!isPlainObject(selector)) return "<none>"
  const parts: Array<string> = []
  const labels = isPlainObject(selector["matchLabels"]) ? selector["matchLabels"] : {}
  for (const [key, value] of Object.entries(labels)) parts.push(`${key}=${String(value)}`)
  const expressions = Array.isArray(selector["matchExpressions"]) ? selector["matchExpressions"].filter(isPlainObject) : []
  for (const e of expressions) {
    const key = String(e["key"] ?? "")
    const values = Array.isArray(e["values"]) ? e["values"].map(String).join(",") : ""
    switch (e["operator"]) {
      case "In":
        parts.push(`${key} in (${values})`)
        break
      case "NotIn":
        parts.push(`${key} notin (${values})`)
        break
      case "Exists":
        parts.push(key)
        break
      case "DoesNotExist":
        parts.push(`!${key}`)
        break
    }
  }
  return parts.length === 0 ? "<none>" : parts.join(",")
}

const nodeSelectorText = (object: KubeObject): string => {
  const selector = jsonPathValue(object, ".spec.template.spec.nodeSelector")
  if (!isPlainObject(selector) || Object.keys(selector).length === 0) return "<none>"
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(",")
}

export const deploymentTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Ready", "string", "Number of the pod with ready state"),
    column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
    column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
    age,
    containersColumn,
    imagesColumn,
    selectorColumn
  ],
  cells: (object, now) => [
    object.metadata.name ?? "",
    `${count(object, ".status.readyReplicas")}/${count(object, ".spec.replicas")}`,
    count(object, ".status.updatedReplicas"),
    count(object, ".status.availableReplicas"),
    created(object, now),
    names(object),
    images(object),
    selectorText(object)
  ]
}

export const statefulSetTable: TableConvertor = {
  columns: [nameColumn, column("Ready", "string", "Number of the pod with ready state"), age, containersColumn, imagesColumn],
  cells: (object, now) => [
    object.metadata.name ?? "",
    `${count(object, ".status.readyReplicas")}/${count(object, ".spec.replicas")}`,
    created(object, now),
    names(object),
    images(object)
  ]
}

export const daemonSetTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
    column("Current", "integer", "The number of nodes running at least one daemon pod and are supposed to."),
    column(
      "Ready",
      "integer",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."
    ),
    column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
    column(
      "Available",
      "integer",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available."
    ),
    column("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit on a node."),
    age,
    containersColumn,
    imagesColumn,
    selectorColumn
  ],
  cells: (object, now) => [
    object.metadata.name ?? "",
    count(object, ".status.desiredNumberScheduled"),
    count(object, ".status.currentNumberScheduled"),
    count(object, ".status.numberReady"),
    count(object, ".status.updatedNumberScheduled"),
    count(object, ".status.numberAvailable"),
    nodeSelectorText(object),
    created(object, now),
    names(object),
    images(object),
    selectorText(object)
  ]
}

export const replicaSetTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Desired", "integer", "Number of desired pods."),
    column("Current", "integer", "Number of actually running pods."),
    column("Ready", "integer", "Number of ready pods."),
    age,
    containersColumn,
    imagesColumn,
    selectorColumn
  ],
  cells: (object, now) => [
    object.metadata.name ?? "",
    count(object, ".spec.replicas"),
    count(object, ".status.replicas"),
    count(object, ".status.readyReplicas"),
    created(object, now),
    names(object),
    images(object),
    selectorText(object)
  ]
}

export const controllerRevisionTable: TableConvertor = {
  columns: [
    nameColumn,
    column("Controller", "string", "Controller of the object"),
    column("Revision", "integer", "Revision indicates the revision of the state represented by Data."),
    age
  ],
  cells: (object, now) => {
    const owner = object.metadata.ownerReferences?.find((r) => r.controller === true)
    const group = owner?.apiVersion.includes("/") === true ? `.${owner.apiVersion.slice(0, owner.apiVersion.indexOf("/"))}` : ""
    return [
      object.metadata.name ?? "",
      owner === undefined ? "<none>" : `${owner.kind.toLowerCase()}${group}/${owner.name}`,
      count(object, ".revision"),
      created(object, now)
    ]
  }
}
