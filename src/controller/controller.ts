import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import type { KubeApi } from "../kube/KubeApi.ts"
import { reflect } from "../kube/reflector.ts"
import { resources } from "../kube/resources.ts"
import { watcher } from "../kube/watcher.ts"
import { makeItemRateLimiter } from "../workqueue/itemRateLimiter.ts"
import { runWorkers } from "../workqueue/runWorkers.ts"
import type { Reconcile, WorkerObserver } from "../workqueue/runWorkers.ts"
import { Scheduler } from "../workqueue/Scheduler.ts"
import type { WorkQueue } from "../workqueue/Scheduler.ts"
import { reconcileAdvancedCronJob } from "./advancedCronJob/reconcile.ts"
import { advancedCronJobWatches } from "./advancedCronJob/watches.ts"
import { withEventCorrelation } from "../kube/events.ts"
import { makeExclusionList, reconcileExclusionList } from "./eraserExclusion/reconcile.ts"
import { exclusionListWatches } from "./eraserExclusion/watches.ts"
import { reconcileImageUnreported } from "./imageUnreported/reconcile.ts"
import { imageUnreportedWatches } from "./imageUnreported/watches.ts"
import type { ControllerSettings } from "./settings.ts"
import { reconcileImageListPullJob } from "./imageListPullJob/reconcile.ts"
import { imageListPullJobWatches } from "./imageListPullJob/watches.ts"
import { reconcileImagePullJob } from "./imagePullJob/reconcile.ts"
import { pullsUnderWay } from "./imagePullJob/registryRoom.ts"
import { imagePullJobBookkeeping, makeImagePullJobBooks } from "./imagePullJob/state.ts"
import { imagePullJobWatches } from "./imagePullJob/watches.ts"
import { makeTaskWriter } from "./imagePullJob/taskWriter.ts"
import { reconcileNodeImage } from "./nodeImage/reconcile.ts"
import { makeNodeImageBooks } from "./nodeImage/state.ts"
import { nodeImageWatches } from "./nodeImage/watches.ts"
import { reconcileNodeWarming } from "./nodeWarming/reconcile.ts"
import { makeNodeWarmingBooks } from "./nodeWarming/state.ts"
import type { WarmingEnded } from "./nodeWarming/state.ts"
import { nodeWarmingWatches } from "./nodeWarming/watches.ts"
import { reconcilePullSecrets } from "./pullSecrets/reconcile.ts"
import { makeSourceSecrets } from "./pullSecrets/sourceSecrets.ts"
import { pullSecretsWatches, sourceSecretsResynced } from "./pullSecrets/watches.ts"
import { controllerStores, jobKeyOf } from "./stores.ts"
import type { ControllerStores } from "./stores.ts"
import { wake } from "./wake.ts"
import { reconcileWorkload } from "./workload/reconcile.ts"
import { makeWorkloadBooks } from "./workload/state.ts"
import { workloadWatches } from "./workload/watches.ts"

/** The queues the watches feed, one per reconciler (a type, not an interface: the gauges walk its entries). */
export type ControllerQueues = {
  readonly [K in
    | "nodeImage"
    | "imagePullJob"
    | "imageListPullJob"
    | "advancedCronJob"
    | "pullSecrets"
    | "workload"
    | "nodeWarming"
    | "eraserExclusion"
    | "imageUnreported"]: WorkQueue
}

/** What the gauges read of the reconcilers' books (role.ts), and all that the controller shows of them. */
export interface ControllerGauges {
  /** Nodes the startup taint holds now (preheat_nodes_warming). */
  readonly nodesWarming: () => number
  /** Each registry's concurrent-pull limit now, where one holds (preheat_registry_pull_limit). */
  readonly registryPullLimits: () => ReadonlyMap<string, number>
  /** The warmings that ended since the last call, oldest first (preheat_node_warm_seconds). */
  readonly drainEndedWarmings: () => ReadonlyArray<WarmingEnded>
}

export interface Controller {
  readonly stores: ControllerStores
  readonly queues: ControllerQueues
  readonly gauges: ControllerGauges
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
): Effect.fn.Return<Controller, never, KubeApi | Scheduler | Scope.Scope> {
  const scheduler = yield* Scheduler
  const queues: ControllerQueues = {
    nodeImage: yield* scheduler.queue("nodeimage"),
    imagePullJob: yield* scheduler.queue("imagepulljob"),
    imageListPullJob: yield* scheduler.queue("imagelistpulljob"),
    advancedCronJob: yield* scheduler.queue("advancedcronjob"),
    pullSecrets: yield* scheduler.queue("pullsecrets"),
    workload: yield* scheduler.queue("workload"),
    nodeWarming: yield* scheduler.queue("nodewarming"),
    eraserExclusion: yield* scheduler.queue("eraserexclusion"),
    imageUnreported: yield* scheduler.queue("imageunreported")
  }
  const stores = controllerStores()
  // The reconcilers' own state, fresh for each controller made (and kept by it across terms of leadership).
  const jobBooks = makeImagePullJobBooks(settings.maxConcurrentPullsPerRegistry)
  const sourceSecrets = makeSourceSecrets()
  const warmingBooks = makeNodeWarmingBooks()
  const taskWriter = yield* makeTaskWriter(stores.nodeImages, Duration.millis(settings.taskWriteBatchMs))
  // eraser's exclusion list: its ConfigMap watched and written only with --eraser-exclusion-namespace.
  const namespace = settings.eraserExclusionNamespace
  const exclusion = namespace === undefined ? undefined : makeExclusionList(namespace)
  // Built before any store is watched: each takes what it reads (its stores, settings, queue and books).
  const reconcilers = {
    nodeImage: reconcileNodeImage(stores, settings, makeNodeImageBooks(), sourceSecrets),
    imagePullJob: reconcileImagePullJob(stores, settings, queues.imagePullJob, jobBooks, sourceSecrets, taskWriter),
    imageListPullJob: reconcileImageListPullJob(stores),
    advancedCronJob: reconcileAdvancedCronJob(stores),
    pullSecrets: reconcilePullSecrets(stores, settings.secretNamespace, sourceSecrets),
    workload: reconcileWorkload(stores, makeWorkloadBooks()),
    nodeWarming: reconcileNodeWarming(stores, settings, warmingBooks),
    eraserExclusion: exclusion === undefined ? undefined : reconcileExclusionList(stores.jobs, exclusion),
    imageUnreported: reconcileImageUnreported(stores)
  }
  // What each reconciler watches, declared next to it; every store exists before any watch starts.
  const pulls = imagePullJobWatches(queues.imagePullJob, stores.jobs, settings.nodeReportBatchMs)
  const nodeImages = nodeImageWatches(queues.nodeImage, stores.nodeImages)
  const lists = imageListPullJobWatches(queues.imageListPullJob)
  const crons = advancedCronJobWatches(queues.advancedCronJob)
  const secrets = pullSecretsWatches(queues.pullSecrets)
  const sourceSecretsChanged = sourceSecretsResynced(queues, stores)
  const workloads = workloadWatches(queues.workload, stores)
  const warming = nodeWarmingWatches(queues.nodeWarming, stores.nodes, settings.warmTaintKey)
  const unreported = imageUnreportedWatches(queues.imageUnreported, stores)
  const excluded =
    exclusion === undefined ? { jobs: [], configMaps: [] } : exclusionListWatches(queues.eraserExclusion, exclusion.namespace)
  // The only books that follow the stores; the other reconcilers' books change in their reconciles.
  const jobBookkeeping = imagePullJobBookkeeping(queues.imagePullJob, jobBooks, stores.jobs, settings.nodeReportBatchMs)
  yield* reflect(
    stores.jobs,
    watcher(resources.imagePullJob, {}),
    wake(
      [
        ...pulls.jobs,
        ...nodeImages.jobs,
        ...lists.jobs,
        ...secrets.jobs,
        ...workloads.jobs,
        ...warming.jobs,
        ...excluded.jobs,
        ...unreported.jobs
      ],
      jobBookkeeping.jobs
    )
  )
  yield* reflect(stores.listJobs, watcher(resources.imageListPullJob, {}), wake([...lists.listJobs, ...crons.listJobs]))
  yield* reflect(stores.cronJobs, watcher(resources.advancedCronJob, {}), wake(crons.cronJobs))
  yield* reflect(
    stores.secretCopies,
    // The whole namespace, not preheat's label only: copies OpenKruise's controller left there carry the
    // source secret's labels (none of theirs), and are found by annotation (pullSecrets/copies.ts isCopy).
    watcher(resources.secret, { namespace: settings.secretNamespace }),
    wake([...secrets.secretCopies, ...pulls.secretCopies])
  )
  yield* reflect(stores.pods, watcher(resources.pod, {}), wake([...pulls.pods, ...workloads.pods], jobBookkeeping.pods))
  yield* reflect(stores.deployments, watcher(resources.deployment, {}), wake(workloads.deployments))
  yield* reflect(stores.statefulSets, watcher(resources.statefulSet, {}), wake(workloads.statefulSets))
  yield* reflect(stores.daemonSets, watcher(resources.daemonSet, {}), wake(workloads.daemonSets))
  yield* reflect(stores.replicaSets, watcher(resources.replicaSet, {}), wake(workloads.replicaSets))
  yield* reflect(stores.controllerRevisions, watcher(resources.controllerRevision, {}), wake(workloads.controllerRevisions))
  // Their lists are cut to what the stores keep page by page: a kubelet's Node is mostly what is not read.
  yield* reflect(
    stores.nodes,
    watcher(resources.node, { transform: stores.nodes.transform }),
    wake([...nodeImages.nodes, ...warming.nodes])
  )
  yield* reflect(
    stores.nodeImages,
    watcher(resources.nodeImage, { transform: stores.nodeImages.transform }),
    wake([...nodeImages.nodeImages, ...pulls.nodeImages, ...warming.nodeImages, ...unreported.nodeImages], jobBookkeeping.nodeImages)
  )
  if (exclusion !== undefined) yield* reflect(exclusion.store, watcher(resources.configMap, exclusion.watch), wake(excluded.configMaps))
  const all = [...Object.values(stores), ...(exclusion === undefined ? [] : [exclusion.store])]
  const synced = Effect.all(
    all.map((store) => store.synced),
    { discard: true }
  )

  const reconcileAll = (observe?: (controller: string) => WorkerObserver) =>
    Effect.gen(function* () {
      // Deciding before every store is complete would drop tags whose owners are not yet seen.
      yield* synced
      // The books open with the pulls a previous leader started, so the registry limit holds across a
      // hand-over (and a limit throttling sets starts from what is pulling, flag or not).
      const underWay = pullsUnderWay(
        [...stores.nodeImages.entries()].map((stored) => stored.view),
        (uid) => jobKeyOf(stores.jobs, uid)
      )
      for (const [key, { inFlight, registry }] of underWay) jobBooks.registries.settle(key, registry, inFlight, 0)
      const run = (name: string, queue: WorkQueue, reconcile: Reconcile<KubeApi>) =>
        Effect.flatMap(makeItemRateLimiter(), (rateLimiter) =>
          runWorkers(queue, {
            concurrency: settings.workers,
            reconcile,
            rateLimiter,
            ...(observe === undefined ? {} : { observe: observe(name) })
          })
        )
      const resyncSecrets = Effect.flatMap(sourceSecrets.resync, sourceSecretsChanged).pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(settings.secretResyncMs))),
        Effect.delay(Duration.millis(settings.secretResyncMs))
      )
      return yield* Effect.all(
        [
          resyncSecrets,
          run("nodeimage", queues.nodeImage, reconcilers.nodeImage),
          run("imagepulljob", queues.imagePullJob, reconcilers.imagePullJob),
          run("imagelistpulljob", queues.imageListPullJob, reconcilers.imageListPullJob),
          run("advancedcronjob", queues.advancedCronJob, reconcilers.advancedCronJob),
          run("pullsecrets", queues.pullSecrets, reconcilers.pullSecrets),
          run("workload", queues.workload, reconcilers.workload),
          run("nodewarming", queues.nodeWarming, reconcilers.nodeWarming),
          run("imageunreported", queues.imageUnreported, reconcilers.imageUnreported),
          ...(reconcilers.eraserExclusion === undefined
            ? []
            : [run("eraserexclusion", queues.eraserExclusion, reconcilers.eraserExclusion)])
        ],
        { concurrency: "unbounded" }
      ).pipe(Effect.andThen(Effect.never))
    })

  // One event correlation for the term of leadership, shared by every reconciler (eventCorrelation.ts).
  const reconcile = (observe?: (controller: string) => WorkerObserver) => withEventCorrelation(reconcileAll(observe))

  return {
    stores,
    queues,
    gauges: {
      nodesWarming: warmingBooks.warming,
      registryPullLimits: () => jobBooks.registries.limits(),
      drainEndedWarmings: warmingBooks.drainEnded
    },
    synced,
    hasSynced: () => all.every((store) => store.hasSynced()),
    reconcile
  }
})
