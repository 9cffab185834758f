import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import type { KubeApi } from "../kube/KubeApi.ts"
import { reflect } from "../kube/reflector.ts"
import { resources } from "../kube/resources.ts"
import { watcher } from "../kube/watcher.ts"
import { makeItemRateLimiter } from "../workqueue/itemRateLimiter.ts"
import { runWorkers } from "../workqueue/runWorkers.ts"
import type { Reconcile, WorkerObserver } from "../workqueue/runWorkers.ts"
import { WorkQueues } from "../workqueue/WorkQueues.ts"
import type { WorkQueue } from "../workqueue/WorkQueues.ts"
import { reconcileAdvancedCronJob } from "./advancedCronJob/reconcile.ts"
import { advancedCronJobWatches } from "./advancedCronJob/watches.ts"
import { allSecretCopies } from "./context.ts"
import type { ControllerContext, ControllerSettings } from "./context.ts"
import { reconcileImageListPullJob } from "./imageListPullJob/reconcile.ts"
import { imageListPullJobWatches } from "./imageListPullJob/watches.ts"
import type { JobProgress } from "./imagePullJob/progress.ts"
import { reconcileImagePullJob } from "./imagePullJob/reconcile.ts"
import { pullsUnderWay } from "./imagePullJob/registryRoom.ts"
import { imagePullJobWatches, jobsReferencingSecrets, noteNodeImage, notePod } from "./imagePullJob/watches.ts"
import { reconcileNodeImage } from "./nodeImage/reconcile.ts"
import { nodeImageWatches } from "./nodeImage/watches.ts"
import { copyLabel } from "./pullSecrets/copies.ts"
import { reconcilePullSecrets } from "./pullSecrets/reconcile.ts"
import { makeSourceSecrets } from "./pullSecrets/sourceSecrets.ts"
import type { Resynced } from "./pullSecrets/sourceSecrets.ts"
import { pullSecretsWatches } from "./pullSecrets/watches.ts"
import { rememberedTimes } from "./nodeImage/tagTimes.ts"
import { RegistryBudget } from "./registryBudget.ts"
import { controllerStores, jobKeyOf } from "./stores.ts"
import { wake } from "./wake.ts"
import { reconcileWorkload } from "./workload/reconcile.ts"
import { workloadWatches } from "./workload/watches.ts"

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
  const stores = controllerStores()
  const ctx: ControllerContext = {
    ...stores,
    settings,
    statusWrittenAt: new Map<string, number>(),
    propagated: new Map<string, string>(),
    targets: new Map<string, JobProgress>(),
    placement: { nodes: 0, pods: 0 },
    parseTime: rememberedTimes(),
    awaitingNewer: new Map<string, Set<string>>(),
    registries: new RegistryBudget(settings.maxConcurrentPullsPerRegistry),
    sourceSecrets: makeSourceSecrets(),
    preDownloads: new Map<string, { readonly uid: string; readonly settled: string }>(),
    queues
  }
  // What each reconciler watches, declared next to it; every store exists before any watch starts.
  const pulls = imagePullJobWatches(ctx)
  const nodeImages = nodeImageWatches(ctx)
  const lists = imageListPullJobWatches(ctx)
  const crons = advancedCronJobWatches(ctx)
  const secrets = pullSecretsWatches(ctx)
  const workloads = workloadWatches(ctx)
  yield* reflect(
    stores.jobs,
    watcher(resources.imagePullJob, {}),
    wake([...pulls.jobs, ...nodeImages.jobs, ...lists.jobs, ...secrets.jobs, ...workloads.jobs])
  )
  yield* reflect(stores.listJobs, watcher(resources.imageListPullJob, {}), wake([...lists.listJobs, ...crons.listJobs]))
  yield* reflect(stores.cronJobs, watcher(resources.advancedCronJob, {}), wake(crons.cronJobs))
  yield* reflect(
    stores.secretCopies,
    watcher(resources.secret, { namespace: settings.secretNamespace, labelSelector: `${copyLabel}=true` }),
    wake(secrets.secretCopies)
  )
  yield* reflect(stores.pods, watcher(resources.pod, {}), wake([...pulls.pods, ...workloads.pods], notePod(ctx)))
  yield* reflect(stores.deployments, watcher(resources.deployment, {}), wake(workloads.deployments))
  yield* reflect(stores.statefulSets, watcher(resources.statefulSet, {}), wake(workloads.statefulSets))
  yield* reflect(stores.daemonSets, watcher(resources.daemonSet, {}), wake(workloads.daemonSets))
  yield* reflect(stores.replicaSets, watcher(resources.replicaSet, {}), wake(workloads.replicaSets))
  yield* reflect(stores.controllerRevisions, watcher(resources.controllerRevision, {}), wake(workloads.controllerRevisions))
  yield* reflect(stores.nodes, watcher(resources.node, {}), wake(nodeImages.nodes))
  yield* reflect(
    stores.nodeImages,
    watcher(resources.nodeImage, {}),
    wake([...nodeImages.nodeImages, ...pulls.nodeImages], noteNodeImage(ctx))
  )
  const all = Object.values(stores)
  const synced = Effect.all(
    all.map((store) => store.synced),
    { discard: true }
  )

  /**
   * Source secrets that changed, appeared or went since the last resync: the jobs naming them, and
   * the copies; for a secret no longer usable, also the NodeImages of those jobs, which drop their
   * references to its copy (it is deleted).
   */
  const sourceSecretsChanged = ({ changed, withdrawn }: Resynced) =>
    Effect.suspend(() => {
      if (changed.length === 0) return Effect.void
      const jobs = jobsReferencingSecrets(new Set(changed), ctx.jobs)
      const nodes = new Set(
        jobsReferencingSecrets(new Set(withdrawn), ctx.jobs).flatMap((key) => [
          ...ctx.nodeImages.indexes.owners.nodesOf(ctx.jobs.get(key)?.metadata.uid ?? "")
        ])
      )
      return Effect.andThen(
        Effect.forEach(jobs, (key) => queues.imagePullJob.add(key), { discard: true }),
        Effect.andThen(
          Effect.forEach(nodes, (node) => queues.nodeImage.add(node), { discard: true }),
          queues.pullSecrets.add(allSecretCopies)
        )
      )
    })

  const reconcile = (observe?: (controller: string) => WorkerObserver) =>
    Effect.gen(function* () {
      // Deciding before every store is complete would drop tags whose owners are not yet seen.
      yield* synced
      // The books open with the pulls a previous leader started, so the registry limit holds across a hand-over.
      if (ctx.registries.limit !== undefined) {
        const underWay = pullsUnderWay(
          [...ctx.nodeImages.entries()].map((stored) => stored.view),
          (uid) => jobKeyOf(ctx.jobs, uid)
        )
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
      const resyncSecrets = Effect.flatMap(ctx.sourceSecrets.resync, sourceSecretsChanged).pipe(
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

  return { context: ctx, synced, hasSynced: () => all.every((store) => store.hasSynced()), reconcile }
})
