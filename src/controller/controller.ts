import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import { makeInformer } from "../kube/informer.ts"
import type { Change, Informer } from "../kube/informer.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import { makeItemRateLimiter } from "../workqueue/itemRateLimiter.ts"
import { runWorkers } from "../workqueue/runWorkers.ts"
import type { Reconcile, WorkerObserver } from "../workqueue/runWorkers.ts"
import { WorkQueues } from "../workqueue/WorkQueues.ts"
import type { WorkQueue } from "../workqueue/WorkQueues.ts"
import { reconcileAdvancedCronJob } from "./advancedCronJob/reconcile.ts"
import type { ControllerContext, ControllerSettings } from "./context.ts"
import { changeHandlers } from "./handlers.ts"
import { reconcileImageListPullJob } from "./imageListPullJob/reconcile.ts"
import type { JobProgress } from "./imagePullJob/progress.ts"
import { reconcileImagePullJob } from "./imagePullJob/reconcile.ts"
import { pullsUnderWay } from "./imagePullJob/registryRoom.ts"
import { reconcileNodeImage } from "./nodeImage/reconcile.ts"
import { nodeImageView } from "./nodeImage/view.ts"
import { OwnerIndex } from "./ownerIndex.ts"
import { copyLabel } from "./pullSecrets/copies.ts"
import { reconcilePullSecrets } from "./pullSecrets/reconcile.ts"
import { makeSourceSecrets } from "./pullSecrets/sourceSecrets.ts"
import { RegistryBudget } from "./registryBudget.ts"
import { workloadHandlers } from "./workload/handlers.ts"
import { reconcileWorkload } from "./workload/reconcile.ts"

export interface Controller {
  readonly context: ControllerContext
  /** Resolves once every store has its first list. */
  readonly synced: Effect.Effect<void>
  readonly hasSynced: () => boolean
  /** Reconciles until interrupted: run it only while leading. */
  readonly reconcile: (observe?: (controller: string) => WorkerObserver) => Effect.Effect<never, never, KubeApi>
}

/**
 * The stores (watching from the start, so a new leader begins warm) and the reconcilers
 * that feed on them (SPEC §2).
 */
export const makeController = Effect.fnUntraced(function* (
  settings: ControllerSettings
): Effect.fn.Return<Controller, never, KubeApi | WorkQueues | Scope.Scope> {
  const workQueues = yield* WorkQueues
  const queues = {
    nodeImage: yield* workQueues.queue("nodeimage"),
    imagePullJob: yield* workQueues.queue("imagepulljob"),
    imageListPullJob: yield* workQueues.queue("imagelistpulljob"),
    advancedCronJob: yield* workQueues.queue("advancedcronjob"),
    pullSecrets: yield* workQueues.queue("pullsecrets"),
    workload: yield* workQueues.queue("workload")
  }
  let context: ControllerContext | undefined
  const handlers = changeHandlers(() => context!)
  const workloads = workloadHandlers(() => context!)
  const both = (a: (c: Change) => Effect.Effect<void>, b: (c: Change) => Effect.Effect<void>) => (c: Change) => Effect.andThen(a(c), b(c))
  // Handlers run from the first list on; the context they read is complete before any informer starts.
  const lazy =
    <A>(handler: (a: A) => Effect.Effect<void>) =>
    (a: A) =>
      Effect.suspend(() => handler(a))
  const partial = {
    settings,
    owners: new OwnerIndex(),
    jobKeyByUid: new Map<string, string>(),
    statusWrittenAt: new Map<string, number>(),
    propagated: new Map<string, string>(),
    targets: new Map<string, JobProgress>(),
    placement: { nodes: 0, pods: 0 },
    awaitingNewer: new Map<string, Set<string>>(),
    registries: new RegistryBudget(settings.maxConcurrentPullsPerRegistry),
    sourceSecrets: makeSourceSecrets(),
    preDownloads: new Map<string, { readonly uid: string; readonly settled: string }>(),
    queues
  }
  const informers: Record<
    | "nodes"
    | "nodeImages"
    | "jobs"
    | "listJobs"
    | "cronJobs"
    | "pods"
    | "secretCopies"
    | "deployments"
    | "statefulSets"
    | "daemonSets"
    | "replicaSets"
    | "controllerRevisions",
    Informer
  > = {
    jobs: yield* makeInformer(resources.imagePullJob, {}, lazy(both(handlers.imagePullJob, workloads.owned("imagePullJob")))),
    listJobs: yield* makeInformer(resources.imageListPullJob, {}, lazy(handlers.imageListPullJob)),
    cronJobs: yield* makeInformer(resources.advancedCronJob, {}, lazy(handlers.advancedCronJob)),
    secretCopies: yield* makeInformer(
      resources.secret,
      { namespace: settings.secretNamespace, labelSelector: `${copyLabel}=true` },
      lazy(handlers.secretCopy)
    ),
    pods: yield* makeInformer(resources.pod, {}, lazy(both(handlers.pod, workloads.owned("pod")))),
    deployments: yield* makeInformer(resources.deployment, {}, lazy(workloads.workload("Deployment"))),
    statefulSets: yield* makeInformer(resources.statefulSet, {}, lazy(workloads.workload("StatefulSet"))),
    daemonSets: yield* makeInformer(resources.daemonSet, {}, lazy(workloads.workload("DaemonSet"))),
    replicaSets: yield* makeInformer(resources.replicaSet, {}, lazy(workloads.owned("replicaSet"))),
    controllerRevisions: yield* makeInformer(resources.controllerRevision, {}, lazy(workloads.owned("controllerRevision"))),
    nodes: yield* makeInformer(resources.node, {}, lazy(handlers.node)),
    nodeImages: yield* makeInformer(resources.nodeImage, {}, lazy(handlers.nodeImage))
  }
  context = { ...partial, ...informers }
  const ctx = context
  const all = Object.values(informers)
  const synced = Effect.all(
    all.map((i) => i.synced),
    { discard: true }
  )

  const reconcile = (observe?: (controller: string) => WorkerObserver) =>
    Effect.gen(function* () {
      // Deciding before every store is complete would drop tags whose owners are not yet seen.
      yield* synced
      // The books open with the pulls a previous leader started, so the registry limit holds across a hand-over.
      if (ctx.registries.limit !== undefined) {
        const underWay = pullsUnderWay([...ctx.nodeImages.values()].map(nodeImageView), (uid) => ctx.jobKeyByUid.get(uid))
        for (const [key, { inFlight, registry }] of underWay) ctx.registries.settle(key, registry, inFlight, 0)
      }
      const run = (name: string, queue: WorkQueue, reconcile: Reconcile<KubeApi>) =>
        Effect.flatMap(makeItemRateLimiter(), (rateLimiter) =>
          runWorkers(queue, {
            concurrency: settings.workers,
            reconcile,
            rateLimiter,
            ...(observe === undefined ? {} : { observe: observe(name) })
          })
        )
      const resyncSecrets = Effect.flatMap(ctx.sourceSecrets.resync, handlers.sourceSecretsChanged).pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(settings.secretResyncMs))),
        Effect.delay(Duration.millis(settings.secretResyncMs))
      )
      return yield* Effect.all(
        [
          resyncSecrets,
          run("nodeimage", queues.nodeImage, reconcileNodeImage(ctx)),
          run("imagepulljob", queues.imagePullJob, reconcileImagePullJob(ctx)),
          run("imagelistpulljob", queues.imageListPullJob, reconcileImageListPullJob(ctx)),
          run("advancedcronjob", queues.advancedCronJob, reconcileAdvancedCronJob(ctx)),
          run("pullsecrets", queues.pullSecrets, reconcilePullSecrets(ctx)),
          run("workload", queues.workload, reconcileWorkload(ctx))
        ],
        { concurrency: "unbounded" }
      ).pipe(Effect.andThen(Effect.never))
    })

  return { context: ctx, synced, hasSynced: () => all.every((i) => i.hasSynced()), reconcile }
})
