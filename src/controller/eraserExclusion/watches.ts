// What wakes the exclusion list's reconcile (one key, the list's): a job whose entries in it differ
// before and after its change (a Never job coming, going, changing image, resolving a new digest),
// and any change of the list's ConfigMap (another writer's, or its deletion).
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf } from "../../kube/objectKey.ts"
import { after, before } from "../../kube/store.ts"
import type { Change, Stored } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"
import { exclusionEntries, exclusionListName, keepsWarm } from "./decide.ts"

/** The key of the list in `namespace` (its ConfigMap's). */
export const exclusionListKey = (namespace: string): string => keyOf(namespace, exclusionListName)

const entriesOf = (stored: Stored<Decoded<ImagePullJob>> | undefined): string => {
  const job = keepsWarm(stored)
  return job === undefined ? "" : exclusionEntries(job).join("\n")
}

/** Whether the job's entries in the list differ between the change's two versions. */
export const entriesChanged = (change: Change<Decoded<ImagePullJob>>): boolean => entriesOf(before(change)) !== entriesOf(after(change))

/** A burst of job changes (a list job's children coming together) makes one write. */
const jobBatchMs = 1000

/** What the exclusion list's reconciler watches. */
export const exclusionListWatches = (queue: WorkQueue, namespace: string) => {
  const key = exclusionListKey(namespace)
  return {
    jobs: [
      { queue, keys: (change: Change<Decoded<ImagePullJob>>) => (entriesChanged(change) ? [key] : []), delayMs: jobBatchMs }
    ] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
    configMaps: [{ queue, keys: () => [key] }] satisfies ReadonlyArray<Watch<KubeObject>>
  }
}
