import type { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import type { Store } from "../../../src/kube/store.ts"
import type { WorkQueue } from "../../../src/workqueue/Scheduler.ts"

/** The dev cluster's local copies of what its workload controllers read. */
export interface WorkloadStores {
  readonly deployments: Store
  readonly replicaSets: Store
  readonly statefulSets: Store
  readonly daemonSets: Store
  readonly revisions: Store
  readonly pods: Store
  readonly nodes: Store
}

export interface WorkloadQueues {
  readonly deployment: WorkQueue
  readonly replicaSet: WorkQueue
  readonly statefulSet: WorkQueue
  readonly daemonSet: WorkQueue
  /** Pods without a node. */
  readonly scheduling: WorkQueue
  /** Pods on a node that have not started yet. */
  readonly kubelet: WorkQueue
}

export interface WorkloadContext {
  readonly stores: WorkloadStores
  readonly queues: WorkloadQueues
  /** Each simulated node's container runtime, by node name: what its "kubelet" pulls through. */
  readonly runtimes: ReadonlyMap<string, CriRuntime["Service"]>
}
