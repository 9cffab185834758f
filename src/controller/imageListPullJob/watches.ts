// What wakes an ImageListPullJob: its own changes and those of the ImagePullJobs it controls.
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { keyOf, objectKey } from "../../kube/objectKey.ts"
import { changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { ControllerContext } from "../context.ts"
import type { Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"

export const listJobForItself = (change: Change<Decoded<ImageListPullJob>>): Array<string> => [objectKey(changed(change).raw)]

/** A child job's change (its progress included) wakes the list job that controls it. */
export const listJobOfChild = (change: Change<Decoded<ImagePullJob>>): Array<string> => {
  const { metadata } = changed(change).raw
  return (metadata.ownerReferences ?? [])
    .filter((owner) => owner.kind === "ImageListPullJob" && owner.controller === true)
    .map((owner) => keyOf(metadata.namespace, owner.name))
}

/** What the ImageListPullJob reconciler watches. */
export const imageListPullJobWatches = (ctx: ControllerContext) => ({
  listJobs: [{ queue: ctx.queues.imageListPullJob, keys: listJobForItself }] satisfies ReadonlyArray<Watch<Decoded<ImageListPullJob>>>,
  jobs: [{ queue: ctx.queues.imageListPullJob, keys: listJobOfChild }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>
})
