// What wakes an ImageListPullJob: its own changes and those of the ImagePullJobs it controls.
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Decoded } from "../stores.ts"
import { controllerOf, itself } from "../wake.ts"
import type { Watch } from "../wake.ts"

/** A child job's change (its progress included) wakes the list job that controls it. */
export const listJobOfChild = controllerOf("ImageListPullJob")

/** What the ImageListPullJob reconciler watches. */
export const imageListPullJobWatches = (queue: WorkQueue) => ({
  listJobs: [{ queue, keys: itself }] satisfies ReadonlyArray<Watch<Decoded<ImageListPullJob>>>,
  jobs: [{ queue, keys: listJobOfChild }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>
})
