// What wakes pre-download for a workload: its own changes, and those of the pods, ReplicaSets,
// ControllerRevisions and ImagePullJobs it owns (keys.ts).
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { PodPlacement } from "../imagePullJob/targets.ts"
import type { ControllerStores, Decoded } from "../stores.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Watch } from "../wake.ts"
import { workloadChangeKeys, workloadKeysFor } from "./keys.ts"
import type { WorkloadLookup } from "./keys.ts"
import { workloadStore } from "./reconcile.ts"

type WatchedStores = Pick<ControllerStores, "replicaSets" | "deployments" | "statefulSets" | "daemonSets">

const lookup = (stores: WatchedStores): WorkloadLookup => ({
  replicaSet: (key) => stores.replicaSets.get(key),
  workload: (kind, key) => workloadStore(stores, kind).get(key)
})

/** What the pre-download reconciler watches. */
export const workloadWatches = (queue: WorkQueue, watched: WatchedStores) => {
  const stores = lookup(watched)
  return {
    deployments: [{ queue, keys: (change) => workloadChangeKeys("Deployment", change) }] satisfies ReadonlyArray<Watch<KubeObject>>,
    statefulSets: [{ queue, keys: (change) => workloadChangeKeys("StatefulSet", change) }] satisfies ReadonlyArray<Watch<KubeObject>>,
    daemonSets: [{ queue, keys: (change) => workloadChangeKeys("DaemonSet", change) }] satisfies ReadonlyArray<Watch<KubeObject>>,
    pods: [{ queue, keys: (change) => workloadKeysFor("pod", change, stores) }] satisfies ReadonlyArray<Watch<PodPlacement>>,
    replicaSets: [{ queue, keys: (change) => workloadKeysFor("replicaSet", change, stores) }] satisfies ReadonlyArray<Watch<KubeObject>>,
    controllerRevisions: [{ queue, keys: (change) => workloadKeysFor("controllerRevision", change, stores) }] satisfies ReadonlyArray<
      Watch<KubeObject>
    >,
    jobs: [{ queue, keys: (change) => workloadKeysFor("imagePullJob", change, stores) }] satisfies ReadonlyArray<
      Watch<Decoded<ImagePullJob>>
    >
  }
}
