// Which workloads a change concerns: only the workload that owns the changed object, so a pod of
// one workload never wakes another (no storm across workloads), and only when that workload has
// pre-download on.
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf, splitKey } from "../../kube/objectKey.ts"
import { after, before } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import { parallelismKey } from "./annotations.ts"
import { workloadKinds } from "./revisions.ts"
import type { WorkloadKind } from "./revisions.ts"
import { controllerOf, podReady, specOf, statusOf } from "./template.ts"

/** A work-queue key: `Kind:namespace/name`. */
export const workloadKey = (kind: WorkloadKind, namespace: string | undefined, name: string): string => `${kind}:${keyOf(namespace, name)}`

export const parseWorkloadKey = (key: string): { readonly kind: WorkloadKind; readonly namespace: string; readonly name: string } => {
  const colon = key.indexOf(":")
  const { name, namespace } = splitKey(key.slice(colon + 1))
  return { kind: key.slice(0, colon) as WorkloadKind, namespace: namespace ?? "", name }
}

/** What the mapping reads from the stores. */
export interface WorkloadLookup {
  readonly replicaSet: (key: string) => KubeObject | undefined
  readonly workload: (kind: WorkloadKind, key: string) => KubeObject | undefined
}

const isWorkloadKind = (kind: string): kind is WorkloadKind => (workloadKinds as ReadonlyArray<string>).includes(kind)

/** The workload that controls an object: directly, or through its ReplicaSet for a Deployment's pod. */
const owningWorkload = (object: KubeObject, lookup: WorkloadLookup): string | undefined => {
  const owner = controllerOf(object)
  if (owner === undefined || !owner.apiVersion.startsWith("apps/")) return undefined
  const namespace = object.metadata.namespace
  if (owner.kind === "ReplicaSet") {
    const replicaSet = lookup.replicaSet(keyOf(namespace, owner.name))
    if (replicaSet === undefined || replicaSet.metadata.uid !== owner.uid) return undefined
    const deployment = controllerOf(replicaSet)
    return deployment?.kind === "Deployment" ? workloadKey("Deployment", namespace, deployment.name) : undefined
  }
  return isWorkloadKind(owner.kind) ? workloadKey(owner.kind, namespace, owner.name) : undefined
}

const annotated = (key: string, lookup: WorkloadLookup): boolean => {
  const { kind, name, namespace } = parseWorkloadKey(key)
  return lookup.workload(kind, keyOf(namespace, name))?.metadata.annotations?.[parallelismKey] !== undefined
}

/** What of a pod pre-download reads: where it runs, its revision label, readiness, whether it still runs. */
const podFacts = (pod: KubeObject | undefined): string =>
  pod === undefined
    ? ""
    : JSON.stringify([specOf(pod)["nodeName"], statusOf(pod)["phase"], pod.metadata.labels, pod.metadata.deletionTimestamp, podReady(pod)])

/** What of a ReplicaSet or ControllerRevision pre-download reads: all but its status. */
const ownedFacts = (object: KubeObject | undefined): string =>
  object === undefined
    ? ""
    : JSON.stringify([object.metadata.labels, object.metadata.deletionTimestamp, object["spec"], object["data"], object["revision"]])

/**
 * A workload's own change wakes it while it has the annotation, and once more when it loses it
 * (its unfinished jobs go); workloads that never had it cost nothing.
 */
export const workloadChangeKeys = (kind: WorkloadKind, change: Change): ReadonlyArray<string> => {
  const objects = [before(change)?.raw, after(change)?.raw].filter((o): o is KubeObject => o !== undefined)
  if (!objects.some((o) => o.metadata.annotations?.[parallelismKey] !== undefined)) return []
  return [workloadKey(kind, objects[0]!.metadata.namespace, objects[0]!.metadata.name ?? "")]
}

export type OwnedResource = "pod" | "replicaSet" | "controllerRevision" | "imagePullJob"

/**
 * The workload keys to reconcile for a change of an object a workload owns: a pod's placement,
 * revision or readiness; a ReplicaSet's or ControllerRevision's spec; a job's coming or going
 * (status reports of a job are not news to its workload). Jobs wake their workload also without
 * the annotation: a controller that starts after it was removed still finds the jobs to stop.
 */
export const workloadKeysFor = <A>(resource: OwnedResource, change: Change<A>, lookup: WorkloadLookup): ReadonlyArray<string> => {
  const old = before(change)?.raw
  const current = after(change)?.raw
  const facts = resource === "pod" ? podFacts : ownedFacts
  if (resource === "imagePullJob" ? change.type === "modified" : facts(old) === facts(current)) return []
  const keys = new Set<string>()
  for (const object of [old, current]) {
    if (object === undefined) continue
    const key = owningWorkload(object, lookup)
    if (key !== undefined && (resource === "imagePullJob" || annotated(key, lookup))) keys.add(key)
  }
  return [...keys]
}
