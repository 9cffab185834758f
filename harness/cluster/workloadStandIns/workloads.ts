// The dev cluster's stand-in for kube-controller-manager, kube-scheduler and the kubelets: the
// Deployment, ReplicaSet, StatefulSet and DaemonSet controllers, a scheduler and a kubelet per
// simulated node, each an idempotent reconcile of one key fed by watches. They watch only the
// apps/v1 kinds, Pods and Nodes, so a cluster without workloads costs them nothing but idle watches.
import { Effect } from "effect"
import type { Scope } from "effect"
import type { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { keyOf, objectKey } from "../../../src/kube/objectKey.ts"
import { reflect } from "../../../src/kube/reflector.ts"
import { resources } from "../../../src/kube/resources.ts"
import { changed, makeStore } from "../../../src/kube/store.ts"
import type { Change } from "../../../src/kube/store.ts"
import { watcher } from "../../../src/kube/watcher.ts"
import { makeItemRateLimiter } from "../../../src/workqueue/itemRateLimiter.ts"
import { retryable } from "../../../src/workqueue/ReconcileError.ts"
import { runWorkers } from "../../../src/workqueue/runWorkers.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import { Scheduler } from "../../../src/workqueue/Scheduler.ts"
import type { WorkQueue } from "../../../src/workqueue/Scheduler.ts"
import type { WorkloadContext, WorkloadQueues, WorkloadStores } from "./context.ts"
import { reconcileDaemonSet } from "./daemonSetController.ts"
import { reconcileDeployment } from "./deploymentController.ts"
import { reconcileKubelet } from "./kubelet.ts"
import { controllerOf, isTerminating, spec, status, stringAt } from "./objects.ts"
import { awaitsScheduling, reconcileScheduling } from "./podScheduler.ts"
import { reconcileReplicaSet } from "./replicaSetController.ts"
import { reconcileStatefulSet } from "./statefulSetController.ts"

const objectOf = (change: Change): KubeObject => changed(change).raw

/** Enqueues the object's controller, if it is of `kind`, on `queue`. */
const toOwner = (object: KubeObject, kind: string, queue: WorkQueue) => {
  const owner = controllerOf(object)
  return owner?.kind === kind ? queue.add(keyOf(object.metadata.namespace, owner.name)) : Effect.void
}

const waitsForKubelet = (pod: KubeObject) =>
  stringAt(spec(pod), "nodeName") !== undefined && !isTerminating(pod) && stringAt(status(pod), "phase") !== "Running"

const handlers = (queues: WorkloadQueues, stores: WorkloadStores) => ({
  deployment: (change: Change) => queues.deployment.add(objectKey(objectOf(change))),
  replicaSet: (change: Change) => {
    const object = objectOf(change)
    return Effect.andThen(queues.replicaSet.add(objectKey(object)), toOwner(object, "Deployment", queues.deployment))
  },
  statefulSet: (change: Change) => queues.statefulSet.add(objectKey(objectOf(change))),
  daemonSet: (change: Change) => queues.daemonSet.add(objectKey(objectOf(change))),
  revision: (change: Change) => {
    const object = objectOf(change)
    return Effect.andThen(toOwner(object, "StatefulSet", queues.statefulSet), toOwner(object, "DaemonSet", queues.daemonSet))
  },
  pod: (change: Change) =>
    Effect.gen(function* () {
      const pod = objectOf(change)
      yield* toOwner(pod, "ReplicaSet", queues.replicaSet)
      yield* toOwner(pod, "StatefulSet", queues.statefulSet)
      yield* toOwner(pod, "DaemonSet", queues.daemonSet)
      if (change.type === "deleted") return
      if (awaitsScheduling(pod)) yield* queues.scheduling.add(objectKey(pod))
      else if (waitsForKubelet(pod)) yield* queues.kubelet.add(objectKey(pod))
    }),
  // A node that comes, goes or changes may take daemon pods and pods that found no node.
  node: (_change: Change) =>
    Effect.gen(function* () {
      // During the first lists, what the other stores do not hold yet is enqueued by its own changes.
      for (const set of stores.daemonSets.values()) yield* queues.daemonSet.add(objectKey(set))
      for (const pod of stores.pods.values()) if (awaitsScheduling(pod)) yield* queues.scheduling.add(objectKey(pod))
    })
})

/**
 * Starts the controllers for the life of the scope; resolves once their stores are filled.
 * `runtimes`: each simulated node's container runtime, by node name.
 */
export const startWorkloads = Effect.fnUntraced(function* (
  runtimes: ReadonlyMap<string, CriRuntime["Service"]>
): Effect.fn.Return<void, never, KubeApi | Scheduler | Scope.Scope> {
  const scheduler = yield* Scheduler
  const queues: WorkloadQueues = {
    deployment: yield* scheduler.queue("dev-deployment"),
    replicaSet: yield* scheduler.queue("dev-replicaset"),
    statefulSet: yield* scheduler.queue("dev-statefulset"),
    daemonSet: yield* scheduler.queue("dev-daemonset"),
    scheduling: yield* scheduler.queue("dev-scheduler"),
    kubelet: yield* scheduler.queue("dev-kubelet")
  }
  const stores = {
    deployments: makeStore(resources.deployment),
    replicaSets: makeStore(resources.replicaSet),
    statefulSets: makeStore(resources.statefulSet),
    daemonSets: makeStore(resources.daemonSet),
    revisions: makeStore(resources.controllerRevision),
    pods: makeStore(resources.pod),
    nodes: makeStore(resources.node)
  }
  const on = handlers(queues, stores)
  yield* reflect(stores.deployments, watcher(resources.deployment, {}), on.deployment)
  yield* reflect(stores.replicaSets, watcher(resources.replicaSet, {}), on.replicaSet)
  yield* reflect(stores.statefulSets, watcher(resources.statefulSet, {}), on.statefulSet)
  yield* reflect(stores.daemonSets, watcher(resources.daemonSet, {}), on.daemonSet)
  yield* reflect(stores.revisions, watcher(resources.controllerRevision, {}), on.revision)
  yield* reflect(stores.pods, watcher(resources.pod, {}), on.pod)
  yield* reflect(stores.nodes, watcher(resources.node, {}), on.node)
  const ctx: WorkloadContext = { stores, queues, runtimes }
  yield* Effect.all(
    Object.values(stores).map((store) => store.synced),
    { discard: true }
  )
  const run = (
    queue: WorkQueue,
    concurrency: number,
    reconcile: (key: string) => Effect.Effect<Outcome, unknown, KubeApi>
  ): Effect.Effect<never, never, KubeApi> =>
    Effect.flatMap(makeItemRateLimiter(), (rateLimiter) =>
      runWorkers(queue, { concurrency, reconcile: (key) => Effect.mapError(reconcile(key), retryable), rateLimiter })
    )
  yield* Effect.forkScoped(
    Effect.all(
      [
        run(queues.deployment, 2, reconcileDeployment(ctx)),
        run(queues.replicaSet, 2, reconcileReplicaSet(ctx)),
        run(queues.statefulSet, 2, reconcileStatefulSet(ctx)),
        run(queues.daemonSet, 2, reconcileDaemonSet(ctx)),
        // One scheduler worker: each choice counts the pods the previous one placed.
        run(queues.scheduling, 1, reconcileScheduling(ctx)),
        // Pods start in parallel, each waiting on its own images.
        run(queues.kubelet, 32, reconcileKubelet(ctx))
      ],
      { concurrency: "unbounded", discard: true }
    )
  )
})
