// What wakes an ImagePullJob: its own changes, the NodeImages where its tags changed, the nodes
// and pods its selection may take in or let go, and the pull secrets it names. Only the jobs a
// change concerns are woken: a NodeImage change wakes the owners of the tags that changed, not
// every job of the image (SPEC §4.8).
import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { matchesLabelSelector } from "../../api/labelSelector.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf, objectKey } from "../../kube/objectKey.ts"
import { after, before, changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import { changedOwners } from "../ownerIndex.ts"
import { sourceOfCopy } from "../pullSecrets/copies.ts"
import { jobKeyOf } from "../stores.ts"
import type { Decoded, JobStore } from "../stores.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Watch } from "../wake.ts"
import { nodeSelected } from "./targets.ts"
import type { PodPlacement } from "./targets.ts"

const sameLabels = (a: KubeObject, b: KubeObject): boolean =>
  JSON.stringify(a.metadata.labels ?? {}) === JSON.stringify(b.metadata.labels ?? {})

/** Whether the node came, went, or began to go: every job that selects it may gain or lose it. */
const membershipChanged = (change: Change<NodeImage>): boolean =>
  change.type !== "modified" || change.old.raw.metadata.deletionTimestamp !== change.current.raw.metadata.deletionTimestamp

/** The jobs (selecting by node, not by pod) whose selection of this node differs between the change's two versions. */
const jobsSelectionChanged = (change: Change<NodeImage>, jobs: JobStore): Array<string> => {
  const name = changed(change).raw.metadata.name ?? ""
  const old = before(change)?.raw
  const current = after(change)?.raw
  const everyMember = membershipChanged(change)
  if (!everyMember && old !== undefined && current !== undefined && sameLabels(old, current)) return []
  const keys: Array<string> = []
  for (const { raw, view } of jobs.entries()) {
    if (Result.isFailure(view)) continue
    const { podSelector, selector } = view.success.spec
    if (podSelector !== undefined) continue
    const was = old !== undefined && nodeSelected(selector, name, old.metadata.labels ?? {})
    const is = current !== undefined && nodeSelected(selector, name, current.metadata.labels ?? {})
    if (everyMember ? was || is : was !== is) keys.push(objectKey(raw))
  }
  return keys
}

/** Whether the node set or a node's labels changed: every job's targets may differ. */
export const nodeSetChanged = (change: Change<NodeImage>): boolean => {
  const old = before(change)?.raw
  const current = after(change)?.raw
  return membershipChanged(change) || (old !== undefined && current !== undefined && !sameLabels(old, current))
}

/** The jobs whose tags on this NodeImage changed in a way a job acts on (ownerIndex.ts: changedOwners). */
export const ownersWhoseTagsChanged = (change: Change<NodeImage>, jobs: JobStore): Array<string> =>
  [...changedOwners(before(change)?.view, after(change)?.view)].flatMap((uid) => {
    const key = jobKeyOf(jobs, uid)
    return key === undefined ? [] : [key]
  })

/**
 * Whether a NodeImage change can end the wait of a job whose write conflicted: its writes are
 * tested on the generation, which only a spec change moves, so a status report cannot.
 */
export const specMoved = (change: Change<NodeImage>): boolean =>
  change.type !== "modified" || change.old.raw.metadata.generation !== change.current.raw.metadata.generation

/**
 * The jobs a NodeImage change wakes: the owners of tags that changed, and those whose node
 * selection it changes (those waiting for a newer spec after a conflicting write are the books'
 * to wake: state.ts nodeImageChanged). A daemon's progress report wakes none.
 */
export const jobsForNodeImage = (change: Change<NodeImage>, jobs: JobStore): Set<string> =>
  new Set([...ownersWhoseTagsChanged(change, jobs), ...jobsSelectionChanged(change, jobs)])

const podFacts = (pod: PodPlacement | undefined) => JSON.stringify([pod?.nodeName, pod?.phase, pod?.labels, pod?.deleting])

/** Whether a pod moved in a way a pod selector sees: its node, phase, labels, or its going. */
export const podPlacementChanged = (change: Change<PodPlacement>): boolean =>
  podFacts(before(change)?.view) !== podFacts(after(change)?.view)

/** The jobs of the pod's namespace whose pod selector matches it before or after the change. */
export const jobsForPod = (change: Change<PodPlacement>, jobs: JobStore): Array<string> => {
  if (!podPlacementChanged(change)) return []
  const namespace = changed(change).raw.metadata.namespace
  const labelSets = [before(change), after(change)].flatMap((p) => (p === undefined ? [] : [p.view.labels]))
  const keys: Array<string> = []
  for (const { raw, view } of jobs.entries()) {
    if (raw.metadata.namespace !== namespace) continue
    const podSelector = Result.isSuccess(view) ? view.success.spec.podSelector : undefined
    if (podSelector !== undefined && labelSets.some((labels) => matchesLabelSelector(podSelector, labels))) keys.push(objectKey(raw))
  }
  return keys
}

/** A job's own change wakes it, while it exists. */
export const jobForItself = (change: Change<Decoded<ImagePullJob>>): Array<string> =>
  change.type === "deleted" ? [] : [objectKey(change.current.raw)]

/** The jobs that name any of these pull secrets (`namespace/name`). */
export const jobsReferencingSecrets = (secrets: ReadonlySet<string>, jobs: JobStore): Array<string> => {
  const keys: Array<string> = []
  for (const { raw, view } of jobs.entries()) {
    if (Result.isFailure(view)) continue
    const namespace = raw.metadata.namespace
    if ((view.success.spec.pullSecrets ?? []).some((name) => secrets.has(keyOf(namespace, name)))) keys.push(objectKey(raw))
  }
  return keys
}

/**
 * The jobs naming the source of a copy whose data came or changed: they look for failed nodes to
 * pull on again with it (credentialRenewal.ts), now that the daemons can read it.
 */
export const jobsForCopy = (change: Change, jobs: JobStore): Array<string> => {
  const old = before(change)?.raw
  const current = after(change)?.raw
  if (current === undefined || JSON.stringify(old?.["data"]) === JSON.stringify(current["data"])) return []
  const source = sourceOfCopy(current)
  return source === undefined ? [] : jobsReferencingSecrets(new Set([source]), jobs)
}

/**
 * What the ImagePullJob reconciler watches (what a change means to its books is state.ts's:
 * controller.ts runs both).
 */
export const imagePullJobWatches = (queue: WorkQueue, jobs: JobStore, nodeReportBatchMs: number) => ({
  jobs: [{ queue, keys: jobForItself }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
  nodeImages: [{ queue, keys: (change) => jobsForNodeImage(change, jobs), delayMs: nodeReportBatchMs }] satisfies ReadonlyArray<
    Watch<NodeImage>
  >,
  pods: [{ queue, keys: (change) => jobsForPod(change, jobs) }] satisfies ReadonlyArray<Watch<PodPlacement>>,
  secretCopies: [{ queue, keys: (change) => jobsForCopy(change, jobs) }] satisfies ReadonlyArray<Watch<KubeObject>>
})
