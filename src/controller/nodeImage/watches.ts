// What wakes a NodeImage's reconcile (keyed by node name): its Node, its own changes that are work
// for it, and the deletion or completion of a job that owns tags on it.
import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { after, before, changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import { nodeImageChanged } from "../ownerIndex.ts"
import type { Decoded, NodeImageStore } from "../stores.ts"
import type { Watch } from "../wake.ts"

/** Any change of a Node: it may need a NodeImage, or lose it. */
const nodeImageForNode = (change: Change): Array<string> => [changed(change).raw.metadata.name ?? ""]

/** A NodeImage's tasks, labels or outcomes changed (progress reports are not work for it). */
export const nodeImageForItself = (change: Change<NodeImage>): Array<string> =>
  nodeImageChanged(before(change)?.view, after(change)?.view) ? [changed(change).raw.metadata.name ?? ""] : []

/** A job that went without its finalizer: its tags are cleaned up by their NodeImages. */
export const nodeImagesOfDeletedJob = (change: Change<Decoded<ImagePullJob>>, nodeImages: NodeImageStore): Array<string> =>
  change.type === "deleted" ? [...nodeImages.indexes.owners.nodesOf(change.old.raw.metadata.uid ?? "")] : []

/**
 * A job with pull secrets that finished: its tags stay until their TTL, but the copies they point
 * at are released (pullSecrets/copies.ts holdingCopies), so its NodeImages drop the references.
 */
export const nodeImagesOfFinishedJob = (change: Change<Decoded<ImagePullJob>>, nodeImages: NodeImageStore): Array<string> => {
  if (change.type !== "modified" || Result.isFailure(change.current.view) || Result.isFailure(change.old.view)) return []
  const job = change.current.view.success
  if ((job.spec.pullSecrets ?? []).length === 0) return []
  const finished = job.status?.completionTime !== undefined && change.old.view.success.status?.completionTime === undefined
  return finished ? [...nodeImages.indexes.owners.nodesOf(change.current.raw.metadata.uid ?? "")] : []
}

/** What the NodeImage reconciler watches. */
export const nodeImageWatches = (queue: WorkQueue, nodeImages: NodeImageStore) => ({
  nodes: [{ queue, keys: nodeImageForNode }] satisfies ReadonlyArray<Watch<KubeObject>>,
  nodeImages: [{ queue, keys: nodeImageForItself }] satisfies ReadonlyArray<Watch<NodeImage>>,
  jobs: [
    { queue, keys: (change) => nodeImagesOfDeletedJob(change, nodeImages) },
    { queue, keys: (change) => nodeImagesOfFinishedJob(change, nodeImages) }
  ] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>
})
