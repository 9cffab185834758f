// The fields kube-apiserver lets each kind be selected by, and their values as it compares them.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { kindId } from "../kindRules.ts"

// metadata.name and metadata.namespace: every kind.
const selectableFields: Record<string, ReadonlyArray<string>> = {
  [kindId(resources.pod)]: [
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName"
  ],
  [kindId(resources.node)]: ["spec.unschedulable"],
  [kindId(resources.secret)]: ["type"],
  [kindId(resources.event)]: [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type"
  ],
  [kindId(resources.namespace)]: ["status.phase"]
}

export const isSelectableField = (resource: Resource, field: string): boolean =>
  field === "metadata.name" || field === "metadata.namespace" || (selectableFields[kindId(resource)] ?? []).includes(field)

// Go's zero values for the boolean fields, which always have a value there.
const booleanFields: ReadonlySet<string> = new Set(["spec.hostNetwork", "spec.unschedulable"])

const text = (u: unknown): string => (typeof u === "string" ? u : typeof u === "number" || typeof u === "boolean" ? String(u) : "")

const fieldAt = (object: JsonObject, path: string): unknown => {
  let node: unknown = object
  for (const part of path.split(".")) node = isPlainObject(node) && Object.hasOwn(node, part) ? node[part] : undefined
  return node
}

export const fieldValue = (object: KubeObject, field: string): string => {
  if (field === "source") return text(fieldAt(object, "source.component"))
  const value = fieldAt(object, field)
  return booleanFields.has(field) && value === undefined ? "false" : text(value)
}
