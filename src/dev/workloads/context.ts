import type { CriRuntime } from "../../cri/CriRuntime.ts"
import type { Informer } from "../../kube/informer.ts"
import type { WorkQueue } from "../../workqueue/WorkQueues.ts"

/** The dev cluster's local copies of what its workload controllers read. */
export interface WorkloadStores {
  readonly deployments: Informer
  readonly replicaSets: Informer
  readonly statefulSets: Informer
  readonly daemonSets: Informer
  readonly revisions: Informer
  readonly pods: Informer
  readonly nodes: Informer
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
