// What wakes an AdvancedCronJob: its own changes and those of the ImageListPullJobs it created.
import type { AdvancedCronJob } from "../../api/advancedCronJob.ts"
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Decoded } from "../stores.ts"
import { controllerOf, itself } from "../wake.ts"
import type { Watch } from "../wake.ts"

/** A scheduled job that starts, finishes or goes wakes the cron job that created it. */
export const cronJobOfChild = controllerOf("AdvancedCronJob")

/** What the AdvancedCronJob reconciler watches. */
export const advancedCronJobWatches = (queue: WorkQueue) => ({
  cronJobs: [{ queue, keys: itself }] satisfies ReadonlyArray<Watch<Decoded<AdvancedCronJob>>>,
  listJobs: [{ queue, keys: cronJobOfChild }] satisfies ReadonlyArray<Watch<Decoded<ImageListPullJob>>>
})
