// What wakes an AdvancedCronJob: its own changes and those of the ImageListPullJobs it created.
import type { AdvancedCronJob } from "../../api/advancedCronJob.ts"
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import { keyOf, objectKey } from "../../kube/objectKey.ts"
import { changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { ControllerContext } from "../context.ts"
import type { Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"

export const cronJobForItself = (change: Change<Decoded<AdvancedCronJob>>): Array<string> => [objectKey(changed(change).raw)]

/** A scheduled job that starts, finishes or goes wakes the cron job that created it. */
export const cronJobOfChild = (change: Change<Decoded<ImageListPullJob>>): Array<string> => {
  const { metadata } = changed(change).raw
  return (metadata.ownerReferences ?? [])
    .filter((owner) => owner.kind === "AdvancedCronJob" && owner.controller === true)
    .map((owner) => keyOf(metadata.namespace, owner.name))
}

/** What the AdvancedCronJob reconciler watches. */
export const advancedCronJobWatches = (ctx: ControllerContext) => ({
  cronJobs: [{ queue: ctx.queues.advancedCronJob, keys: cronJobForItself }] satisfies ReadonlyArray<Watch<Decoded<AdvancedCronJob>>>,
  listJobs: [{ queue: ctx.queues.advancedCronJob, keys: cronJobOfChild }] satisfies ReadonlyArray<Watch<Decoded<ImageListPullJob>>>
})
