// The Kubernetes conventions the dev cluster's workload controllers follow, and small readers of
// the plain JSON objects they act on. Other code (the pre-pull reconciler, kubectl) relies on
// exactly these keys, so they are named once here.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Resource } from "../../../src/kube/resources.ts"

/** On a Deployment's ReplicaSets, their selector and their pods. */
export const podTemplateHashLabel = "pod-template-hash"
/** On StatefulSet and DaemonSet pods and on ControllerRevisions. */
export const controllerRevisionHashLabel = "controller-revision-hash"
/** On ReplicaSets (and their Deployment): the rollout's revision number, as `kubectl rollout history` reads it. */
export const revisionAnnotation = "deployment.kubernetes.io/revision"
export const statefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name"
export const podIndexLabel = "apps.kubernetes.io/pod-index"
export const podTemplateGenerationLabel = "pod-template-generation"

export type Json = Readonly<Record<string, unknown>>

export const field = (value: unknown, key: string): Json => {
  const inner = isPlainObject(value) ? value[key] : undefined
  return isPlainObject(inner) ? inner : {}
}

export const numberAt = (value: unknown, key: string, fallback = 0): number => {
  const inner = isPlainObject(value) ? value[key] : undefined
  return typeof inner === "number" ? inner : fallback
}

export const stringAt = (value: unknown, key: string): string | undefined => {
  const inner = isPlainObject(value) ? value[key] : undefined
  return typeof inner === "string" ? inner : undefined
}

export const spec = (object: KubeObject): Json => field(object, "spec")
export const status = (object: KubeObject): Json => field(object, "status")
export const labelsOf = (object: KubeObject): Readonly<Record<string, string>> => object.metadata.labels ?? {}
export const isTerminating = (object: KubeObject): boolean => object.metadata.deletionTimestamp !== undefined

/** The uid of the object's managing controller (the ownerReference with controller: true). */
const controllerUid = (object: KubeObject): string | undefined => object.metadata.ownerReferences?.find((r) => r.controller === true)?.uid

export const controllerOf = (object: KubeObject) => object.metadata.ownerReferences?.find((r) => r.controller === true)

/** The ownerReference a controller puts on what it creates (metav1.NewControllerRef). */
export const controllerRef = (owner: KubeObject, resource: Resource) => ({
  apiVersion: resource.apiVersion,
  kind: resource.kind,
  name: owner.metadata.name ?? "",
  uid: owner.metadata.uid ?? "",
  controller: true,
  blockOwnerDeletion: true
})

/** Objects in the owner's namespace whose controller is the owner. */
export const ownedBy = (owner: KubeObject, candidates: Iterable<KubeObject>): Array<KubeObject> => {
  const uid = owner.metadata.uid
  const out: Array<KubeObject> = []
  for (const object of candidates) {
    if (object.metadata.namespace === owner.metadata.namespace && controllerUid(object) === uid) out.push(object)
  }
  return out
}

const conditionTrue = (object: KubeObject, type: string): boolean => {
  const conditions = status(object)["conditions"]
  return Array.isArray(conditions) && conditions.some((c) => isPlainObject(c) && c["type"] === type && c["status"] === "True")
}

export const isPodReady = (pod: KubeObject): boolean => !isTerminating(pod) && conditionTrue(pod, "Ready")
export const isNodeReady = (node: KubeObject): boolean => conditionTrue(node, "Ready")

export const template = (workload: KubeObject): Json => field(spec(workload), "template")

/**
 * An int-or-percent (maxSurge, maxUnavailable) against `total`, as intstr.GetScaledValueFromIntOrPercent:
 * "25%" of 3 is 0.75, rounded up or down as asked; a number is itself.
 */
export const scaled = (value: unknown, total: number, roundUp: boolean): number => {
  if (typeof value === "number") return value
  if (typeof value === "string" && /^\d+%$/.test(value)) {
    const exact = (Number(value.slice(0, -1)) * total) / 100
    return roundUp ? Math.ceil(exact) : Math.floor(exact)
  }
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value)
  return 0
}

/** A pod made from a template: its labels plus `labels`, owned by its controller. */
export const podFromTemplate = (
  podTemplate: Json,
  options: {
    readonly namespace: string
    readonly name?: string
    readonly generateName?: string
    readonly labels: Readonly<Record<string, string>>
    readonly ownerReference: ReturnType<typeof controllerRef>
    readonly spec?: Json
  }
): KubeObject => {
  const meta = field(podTemplate, "metadata")
  const templateLabels = isPlainObject(meta["labels"]) ? (meta["labels"] as Record<string, string>) : {}
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.generateName === undefined ? {} : { generateName: options.generateName }),
      namespace: options.namespace,
      labels: { ...templateLabels, ...options.labels },
      ...(isPlainObject(meta["annotations"]) ? { annotations: meta["annotations"] as Record<string, string> } : {}),
      ownerReferences: [options.ownerReference]
    },
    spec: { ...field(podTemplate, "spec"), ...options.spec }
  }
}
