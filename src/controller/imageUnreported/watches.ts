// What wakes a job's ImageUnreported reconcile (keyed by job): its Node lists changing on the nodes
// where it owns tags, its tags' outcomes there, and the job itself coming, changing its spec, or
// losing the condition to another status write.
import { imageUnreported, type ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import { statusImagesOf } from "../../api/nodeStatusImages.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { objectKey } from "../../kube/objectKey.ts"
import { after, before, changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import { ownersWhoseTagsChanged } from "../imagePullJob/watches.ts"
import { jobKeyOf } from "../stores.ts"
import type { ControllerStores, Decoded, JobStore } from "../stores.ts"
import type { Watch } from "../wake.ts"

/** The jobs owning a tag on the node whose status.images changed (the node's NodeImage has the same name). */
const jobsForNodeList = (change: Change, nodeImages: ControllerStores["nodeImages"], jobs: JobStore): Array<string> => {
  if (statusImagesOf(before(change)?.raw) === statusImagesOf(after(change)?.raw)) return []
  const uids = new Set<string>()
  for (const entry of Object.values(nodeImages.view(changed(change).raw.metadata.name ?? "")?.spec.images ?? {})) {
    for (const tag of entry.tags) for (const owner of tag.ownerReferences ?? []) if (owner.uid !== undefined) uids.add(owner.uid)
  }
  return [...uids].flatMap((uid) => {
    const key = jobKeyOf(jobs, uid)
    return key === undefined ? [] : [key]
  })
}

const conditionOf = (raw: KubeObject | undefined) =>
  JSON.stringify(
    ((raw?.["status"] as { conditions?: ReadonlyArray<{ type?: string }> } | undefined)?.conditions ?? []).find(
      (c) => c.type === imageUnreported
    )
  )

/** A job that came, changed its spec or its deletion, or whose ImageUnreported another write changed. */
export const jobChanged = (change: Change<Decoded<ImagePullJob>>): Array<string> => {
  if (change.type === "deleted") return []
  if (change.type === "added") return [objectKey(change.current.raw)]
  const { current, old } = change
  const moved =
    current.raw.metadata.generation !== old.raw.metadata.generation ||
    current.raw.metadata.deletionTimestamp !== old.raw.metadata.deletionTimestamp ||
    conditionOf(current.raw) !== conditionOf(old.raw)
  return moved ? [objectKey(current.raw)] : []
}

/** A node's pulls and its kubelet's list come in bursts: one look at the job per burst. */
const batchMs = 2000

/** What the ImageUnreported reconciler watches. */
export const imageUnreportedWatches = (queue: WorkQueue, stores: Pick<ControllerStores, "jobs" | "nodeImages">) => ({
  jobs: [{ queue, keys: jobChanged }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
  nodes: [
    { queue, keys: (change: Change) => jobsForNodeList(change, stores.nodeImages, stores.jobs), delayMs: batchMs }
  ] satisfies ReadonlyArray<Watch<KubeObject>>,
  nodeImages: [
    { queue, keys: (change: Change<NodeImage>) => ownersWhoseTagsChanged(change, stores.jobs), delayMs: batchMs }
  ] satisfies ReadonlyArray<Watch<NodeImage>>
})
