// Which revision a workload is rolling out to and which ones its pods still run, per kind, from
// the objects kube-controller-manager keeps for it (ReplicaSets, ControllerRevisions, status).
import type { KubeObject } from "../../kube/KubeApi.ts"
import { scaled } from "./annotations.ts"
import { canonical, podActive, podReady, revisionTemplate, specOf, statusOf, templateOf } from "./template.ts"
import type { PodTemplate } from "./template.ts"

export const workloadKinds = ["Deployment", "StatefulSet", "DaemonSet"] as const
export type WorkloadKind = (typeof workloadKinds)[number]

const podTemplateHashLabel = "pod-template-hash"
const controllerRevisionHashLabel = "controller-revision-hash"
/** history.ControllerRevisionHashLabel: the hash label the StatefulSet controller puts on its revisions. */
export const revisionHashLabel = "controller.kubernetes.io/hash"
/** Upstream's minimumReplicasToPreDownloadImage: a set of at most this many replicas is not worth it. */
const minimumReplicas = 3

export interface Revision {
  readonly name: string
  readonly hash: string
  readonly template: PodTemplate
}

export interface Rollout {
  readonly update: Revision
  /** The revisions pods still run besides the update one: empty once the rollout is complete. */
  readonly current: ReadonlyArray<Revision>
  /** The pod label that carries the revision, and its values on pods of the update revision. */
  readonly podLabel: string
  readonly updateValues: ReadonlyArray<string>
  /** Ready pods of the update revision. */
  readonly updatedReady: number
  /** What a percentage of min-updated-ready-pods is of. */
  readonly replicas: number
  /** Why this rollout is not pre-downloaded for (upstream's "ignored" revisions), if it is not. */
  readonly skip?: string
}

/** What the workload owns: its ReplicaSets or ControllerRevisions, and the pods its selector matches. */
export interface Owned {
  readonly replicaSets: ReadonlyArray<KubeObject>
  readonly revisions: ReadonlyArray<KubeObject>
  readonly pods: ReadonlyArray<KubeObject>
}

const replicasOf = (workload: KubeObject): number => {
  const replicas = specOf(workload)["replicas"]
  return typeof replicas === "number" ? replicas : 1
}

const rollingUpdate = (workload: KubeObject, field: "strategy" | "updateStrategy") => {
  const strategy = (specOf(workload)[field] ?? {}) as {
    type?: string
    rollingUpdate?: { maxUnavailable?: number | string; partition?: number }
  }
  return { type: strategy.type, maxUnavailable: strategy.rollingUpdate?.maxUnavailable, partition: strategy.rollingUpdate?.partition ?? 0 }
}

const withoutLabel = (template: PodTemplate, label: string): PodTemplate => {
  const labels = { ...template.metadata?.labels }
  delete labels[label]
  return { ...template, metadata: { ...template.metadata, labels } }
}

const readyOn = (pods: ReadonlyArray<KubeObject>, label: string, values: ReadonlyArray<string>): number =>
  pods.filter((p) => values.includes(p.metadata.labels?.[label] ?? "\u0000") && podReady(p)).length

const deploymentRollout = (deployment: KubeObject, owned: Owned): Rollout | undefined => {
  const wanted = canonical(withoutLabel(templateOf(deployment), podTemplateHashLabel))
  const live = owned.replicaSets.filter((rs) => rs.metadata.deletionTimestamp === undefined)
  const revisionNumber = (rs: KubeObject) => Number(rs.metadata.annotations?.["deployment.kubernetes.io/revision"] ?? 0)
  // The deployment controller's FindNewReplicaSet: the (oldest) ReplicaSet whose template equals the
  // Deployment's, pod-template-hash aside.
  const update = live
    .filter((rs) => canonical(withoutLabel(templateOf(rs), podTemplateHashLabel)) === wanted)
    .sort((a, b) => revisionNumber(b) - revisionNumber(a))[0]
  if (update === undefined) return undefined
  const hash = update.metadata.labels?.[podTemplateHashLabel] ?? templateOf(update).metadata?.labels?.[podTemplateHashLabel]
  if (hash === undefined) return undefined
  const revision = (rs: KubeObject): Revision => ({
    name: rs.metadata.name ?? "",
    hash: rs.metadata.labels?.[podTemplateHashLabel] ?? "",
    template: templateOf(rs)
  })
  const current = live.filter((rs) => rs !== update && replicasOf(rs) > 0).map(revision)
  const replicas = replicasOf(deployment)
  const strategy = rollingUpdate(deployment, "strategy")
  const maxUnavailable = scaled(strategy.maxUnavailable ?? "25%", replicas, false)
  const skip =
    strategy.type === "Recreate"
      ? "the Recreate strategy replaces every pod at once"
      : replicas <= minimumReplicas
        ? `${replicas} replicas: pre-download starts above ${minimumReplicas}`
        : maxUnavailable >= replicas
          ? `every pod is updated in one batch (maxUnavailable ${maxUnavailable} >= replicas ${replicas})`
          : undefined
  return {
    update: revision(update),
    current,
    podLabel: podTemplateHashLabel,
    updateValues: [hash],
    updatedReady: readyOn(owned.pods, podTemplateHashLabel, [hash]),
    replicas,
    ...(skip === undefined ? {} : { skip })
  }
}

const fromControllerRevision = (cr: KubeObject, hashLabel: string): Revision | undefined => {
  const template = revisionTemplate(cr)
  if (template === undefined) return undefined
  const name = cr.metadata.name ?? ""
  return { name, hash: cr.metadata.labels?.[hashLabel] ?? name, template }
}

const statefulSetRollout = (set: KubeObject, owned: Owned): Rollout | undefined => {
  const status = statusOf(set) as { currentRevision?: string; updateRevision?: string }
  if (status.updateRevision === undefined || status.currentRevision === undefined) return undefined
  const byName = (name: string) => owned.revisions.find((cr) => cr.metadata.name === name)
  const updateCr = byName(status.updateRevision)
  const update = updateCr === undefined ? undefined : fromControllerRevision(updateCr, revisionHashLabel)
  if (update === undefined) return undefined
  let current: ReadonlyArray<Revision> = []
  if (status.currentRevision !== status.updateRevision) {
    const currentCr = byName(status.currentRevision)
    const revision = currentCr === undefined ? undefined : fromControllerRevision(currentCr, revisionHashLabel)
    if (revision === undefined) return undefined
    current = [revision]
  }
  const replicas = replicasOf(set)
  const strategy = rollingUpdate(set, "updateStrategy")
  const maxUnavailable = scaled(strategy.maxUnavailable ?? 1, replicas, false)
  const skip =
    strategy.type === "OnDelete"
      ? "the OnDelete strategy updates pods only when they are deleted"
      : replicas <= minimumReplicas
        ? `${replicas} replicas: pre-download starts above ${minimumReplicas}`
        : strategy.partition === 0 && maxUnavailable >= replicas
          ? `every pod is updated in one batch (maxUnavailable ${maxUnavailable} >= replicas ${replicas})`
          : undefined
  // StatefulSet pods carry the revision's name in controller-revision-hash.
  const updateValues = [...new Set([update.name, update.hash])]
  return {
    update,
    current,
    podLabel: controllerRevisionHashLabel,
    updateValues,
    updatedReady: readyOn(owned.pods, controllerRevisionHashLabel, updateValues),
    replicas,
    ...(skip === undefined ? {} : { skip })
  }
}

const daemonSetRollout = (set: KubeObject, owned: Owned): Rollout | undefined => {
  const live = owned.revisions
    .filter((cr) => cr.metadata.deletionTimestamp === undefined)
    .sort((a, b) => Number(b["revision"] ?? 0) - Number(a["revision"] ?? 0))
  // The DaemonSet controller's update revision is its newest (a rollback renumbers the old one).
  const updateCr = live[0]
  const update = updateCr === undefined ? undefined : fromControllerRevision(updateCr, controllerRevisionHashLabel)
  if (update === undefined) return undefined
  const pods = owned.pods.filter(podActive)
  const running = new Set(pods.map((p) => p.metadata.labels?.[controllerRevisionHashLabel]))
  const current = live
    .slice(1)
    .map((cr) => fromControllerRevision(cr, controllerRevisionHashLabel))
    .filter((r): r is Revision => r !== undefined && (running.has(r.hash) || running.has(r.name)))
  const desired = Number(statusOf(set)["desiredNumberScheduled"] ?? 0)
  const replicas = desired > 0 ? desired : pods.length
  const strategy = rollingUpdate(set, "updateStrategy")
  const maxUnavailable = scaled(strategy.maxUnavailable ?? 1, replicas, false)
  const skip =
    maxUnavailable >= replicas ? `every pod is updated in one batch (maxUnavailable ${maxUnavailable} >= ${replicas} scheduled)` : undefined
  const updateValues = [...new Set([update.name, update.hash])]
  return {
    update,
    current,
    podLabel: controllerRevisionHashLabel,
    updateValues,
    updatedReady: readyOn(pods, controllerRevisionHashLabel, updateValues),
    replicas,
    ...(skip === undefined ? {} : { skip })
  }
}

/** The rollout a workload is in, or undefined while the objects that tell are not there yet. */
export const rolloutOf = (kind: WorkloadKind, workload: KubeObject, owned: Owned): Rollout | undefined => {
  switch (kind) {
    case "Deployment":
      return deploymentRollout(workload, owned)
    case "StatefulSet":
      return statefulSetRollout(workload, owned)
    case "DaemonSet":
      return daemonSetRollout(workload, owned)
  }
}
