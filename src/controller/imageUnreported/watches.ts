// What wakes a job's ImageUnreported reconcile (keyed by job): its tags on a node changing owners
// or version, or their daemon's `unreported` mark coming or going (the daemon judges its Node's
// status.images: daemon/unreportedTags.ts), and the job itself coming, changing its spec, or
// losing the condition to another status write.
import { imageUnreported, type ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { objectKey } from "../../kube/objectKey.ts"
import { after, before } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import { jobKeyOf } from "../stores.ts"
import type { ControllerStores, Decoded, JobStore } from "../stores.ts"
import type { Watch } from "../wake.ts"
import { leftOut } from "./decide.ts"

const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * The owners of the tags whose spec (owners, version) or left-out mark changed between two versions
 * of a NodeImage. A pull's progress and other outcomes leave the mark as it was: they wake no job.
 */
export const ownersWhoseMarksChanged = (previous: NodeImage | undefined, current: NodeImage | undefined): Set<string> => {
  const uids = new Set<string>()
  for (const image of new Set([...Object.keys(previous?.spec.images ?? {}), ...Object.keys(current?.spec.images ?? {})])) {
    const specBefore = previous?.spec.images?.[image]
    const specAfter = current?.spec.images?.[image]
    const statusBefore = previous?.status?.imageStatuses?.[image]
    const statusAfter = current?.status?.imageStatuses?.[image]
    if (specBefore === specAfter && statusBefore === statusAfter) continue
    for (const tag of new Set([...(specBefore?.tags ?? []), ...(specAfter?.tags ?? [])].map((t) => t.tag))) {
      const tagBefore = specBefore?.tags.find((t) => t.tag === tag)
      const tagAfter = specAfter?.tags.find((t) => t.tag === tag)
      const markBefore = leftOut(statusBefore?.tags.find((t) => t.tag === tag))
      const markAfter = leftOut(statusAfter?.tags.find((t) => t.tag === tag))
      if (markBefore === markAfter && same(tagBefore, tagAfter)) continue
      for (const owner of [...(tagBefore?.ownerReferences ?? []), ...(tagAfter?.ownerReferences ?? [])]) {
        if (owner.uid !== undefined) uids.add(owner.uid)
      }
    }
  }
  return uids
}

const jobsWhoseMarksChanged = (change: Change<NodeImage>, jobs: JobStore): Array<string> =>
  [...ownersWhoseMarksChanged(before(change)?.view, after(change)?.view)].flatMap((uid) => {
    const key = jobKeyOf(jobs, uid)
    return key === undefined ? [] : [key]
  })

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

/** The daemons' marks come in bursts (a kubelet's new list, jobs' pulls ending together): one look at the job per burst. */
const batchMs = 2000

/** What the ImageUnreported reconciler watches. */
export const imageUnreportedWatches = (queue: WorkQueue, stores: Pick<ControllerStores, "jobs">) => ({
  jobs: [{ queue, keys: jobChanged }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
  nodeImages: [
    { queue, keys: (change: Change<NodeImage>) => jobsWhoseMarksChanged(change, stores.jobs), delayMs: batchMs }
  ] satisfies ReadonlyArray<Watch<NodeImage>>
})
