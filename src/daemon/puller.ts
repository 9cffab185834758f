import { Effect, FiberMap, Result, Semaphore } from "effect"
import type { Scope } from "effect"
import type { ImageTagStatus, NodeImageStatus } from "../api/nodeImage.ts"
import type { CredentialProviders, ProviderAnswer } from "../cri/credentialProvider/CredentialProviders.ts"
import type { CriRuntime } from "../cri/CriRuntime.ts"
import type { KubeApi, KubeObject } from "../kube/KubeApi.ts"
import type { Metrics } from "../ops/metrics.ts"
import type { DiskCheck } from "./diskCheck.ts"
import { initialTags } from "./firstSync.ts"
import type { NodeImageSpecView, StoredNodeImage } from "./nodeImageSpec.ts"
import { pullEventOf, recordPullEvent } from "./pullEvents.ts"
import type { PullSlots } from "./pullSlots.ts"
import { type PullResult, runPullWorker } from "./pullWorker.ts"
import type { StatusReporter } from "./statusReporter.ts"
import { providersOfStoredFailure, withRenewal } from "./providerRenewal/decide.ts"
import type { ProviderRenewal } from "./providerRenewal/watch.ts"
import { storedTagStatus, type TagTask, tagTasks } from "./tagTask.ts"
import { failUnreadableTag, invalidTagReason } from "./unreadableTag.ts"
import { planWorkers } from "./workerPlan.ts"

export interface Puller {
  /** Brings the workers in line with the NodeImage as stored now (undefined: it is gone). */
  readonly sync: (nodeImage: StoredNodeImage | undefined) => Effect.Effect<void>
  /** Workers running (waiting or pulling), by tag key and version. */
  readonly running: () => ReadonlyMap<string, number>
}

/**
 * One worker per tag version that still needs pulling (SPEC §3). Workers live in the daemon's
 * scope; a worker whose tag left the spec or got a new version is interrupted, and its reports
 * stop counting the moment it is replaced, even before its interruption has finished.
 */
export const makePuller = Effect.fnUntraced(function* (options: {
  readonly nodeName: string
  readonly secretNamespace: string
  readonly component: string
  readonly slots: PullSlots
  readonly disk: DiskCheck
  readonly pullProgressTimeoutMillis: number
  readonly credentialProviders: CredentialProviders["Service"] | undefined
  /** Asks the providers of tags that failed on their credentials again; none without providers. */
  readonly renewal: ProviderRenewal | undefined
  readonly reporter: StatusReporter
  /** The NodeImage as stored now, for Events. */
  readonly current: () => KubeObject | undefined
}): Effect.fn.Return<Puller, never, CriRuntime | KubeApi | Metrics | Scope.Scope> {
  const services = yield* Effect.context<CriRuntime | KubeApi | Metrics>()
  /** The running workers by tag key; a finished worker leaves it. Closed with the daemon's scope. */
  const workers = yield* FiberMap.make<string>()
  /**
   * The task of each worker this process started, running or finished (planWorkers' `known`). A
   * worker reports only while its task is the one here: a replaced one is silent at once.
   */
  const tasks = new Map<string, TagTask>()
  // Changes arrive from the watch and from the status writer's own writes: one at a time.
  const lock = yield* Semaphore.make(1)
  /**
   * The tasks of the spec view synced last. The store decodes a version whose spec did not change
   * into the same view (nodeImageSpec.ts), and most versions are status writes (the worker's own,
   * three or so per pull): their tasks, and the spec's text, are the ones already known.
   */
  let lastView: { readonly view: NodeImageSpecView; readonly tasks: ReadonlyArray<TagTask>; readonly text: string } | undefined
  /** The last problems announced that name no tag to fail: each is said once, not on every change. */
  let announced: ReadonlyArray<string> = []

  /** What of the spec cannot be read and names no tag (or the whole spec): logged, and a Warning on the NodeImage. */
  const announce = (problems: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const fresh = problems.filter((p) => !announced.includes(p))
      announced = problems
      if (fresh.length === 0) return
      const message = fresh.join("; ")
      yield* Effect.logWarning("NodeImage spec does not decode in part; the tags that do go on").pipe(
        Effect.annotateLogs({ node: options.nodeName, problems: message })
      )
      yield* recordPullEvent(options.component, options.current(), [], { type: "Warning", reason: invalidTagReason, message }).pipe(
        Effect.provideContext(services)
      )
    })

  const stop = (key: string) =>
    Effect.gen(function* () {
      const task = tasks.get(key)
      if (task === undefined) return
      tasks.delete(key)
      yield* FiberMap.remove(workers, key)
      yield* options.reporter.forget(task.image, task.tag)
      if (options.renewal !== undefined) yield* options.renewal.forget(key)
    })

  /**
   * Watches a failed tag's providers; once one answers anew, the failed status (`status`) goes
   * out again marked, unless the tag moved on meanwhile.
   */
  const watchProviders = (
    task: TagTask,
    status: ImageTagStatus,
    providers: ReadonlyArray<string>,
    refused: ReadonlyArray<ProviderAnswer> | undefined
  ) =>
    options.renewal === undefined || tasks.get(task.key) !== task
      ? Effect.void
      : options.renewal.watch({
          key: task.key,
          reference: task.reference,
          providers,
          refused,
          renewed: (renewed, at) =>
            tasks.get(task.key) === task ? options.reporter.report(task.image, withRenewal(status, renewed, at)) : Effect.void
        })

  /**
   * A tag that failed on its providers' credentials before this daemon started: what they said
   * then is not known, so their first answer now is the one compared with. Known as a task of this
   * process (without a worker), so a new version or its removal ends the watch.
   */
  const watchStoredFailure = (task: TagTask, status: ImageTagStatus | undefined) =>
    Effect.suspend(() => {
      const providers = providersOfStoredFailure(status, task.version)
      if (status === undefined || providers.length === 0) return Effect.void
      tasks.set(task.key, task)
      return watchProviders(task, status, providers, undefined)
    })

  const start = (task: TagTask) =>
    Effect.gen(function* () {
      tasks.set(task.key, task)
      const current = () => tasks.get(task.key) === task
      const context = {
        node: options.nodeName,
        secretNamespace: options.secretNamespace,
        slots: options.slots,
        disk: options.disk,
        pullProgressTimeoutMillis: options.pullProgressTimeoutMillis,
        credentialProviders: options.credentialProviders,
        report: (status: ImageTagStatus) => (current() ? options.reporter.report(task.image, status) : Effect.void),
        finished: (result: PullResult) => {
          const event = pullEventOf(result)
          return current() && event !== undefined
            ? recordPullEvent(options.component, options.current(), task.owners, event).pipe(Effect.provideContext(services))
            : Effect.void
        },
        refused: (status: ImageTagStatus, answers: ReadonlyArray<ProviderAnswer>) =>
          watchProviders(
            task,
            status,
            answers.map((a) => a.provider),
            answers
          )
      }
      const unreadable = task.unreadable
      const run = (unreadable === undefined ? runPullWorker(task, context) : failUnreadableTag({ ...task, unreadable }, context)).pipe(
        Effect.provideContext(services)
      )
      yield* FiberMap.run(workers, task.key, run)
    })

  const sync = (nodeImage: StoredNodeImage | undefined): Effect.Effect<void> =>
    lock.withPermit(
      Effect.gen(function* () {
        if (nodeImage === undefined) {
          for (const key of [...tasks.keys()]) yield* stop(key)
          lastView = undefined
          return
        }
        const decoded = nodeImage.view
        if (Result.isFailure(decoded)) {
          // Keep what runs: a spec the daemon cannot read at all says nothing about which tags to stop.
          return yield* announce([decoded.failure])
        }
        const view: NodeImageSpecView = decoded.success
        yield* announce(view.problems)
        const spec = view.spec
        const first = lastView === undefined
        if (first) yield* options.reporter.setInitial(initialTags(spec))
        // A new view with the same text (a version decoded afresh) is no change of the spec.
        let specChanged = false
        if (lastView?.view !== view) {
          const text = JSON.stringify(spec)
          specChanged = text !== lastView?.text
          lastView = { view, tasks: tagTasks(spec, view.unreadable), text }
        }
        const known = new Map([...tasks].map(([key, task]) => [key, task.version]))
        const status = nodeImage.raw["status"] as NodeImageStatus | undefined
        const plan = planWorkers(lastView.tasks, status?.imageStatuses, known)
        for (const key of plan.stop) yield* stop(key)
        for (const task of plan.start) yield* start(task)
        // Only at the first look: a tag failing later fails in a worker of this process.
        if (first && options.renewal !== undefined) {
          for (const task of lastView.tasks) {
            if (!tasks.has(task.key)) yield* watchStoredFailure(task, storedTagStatus(status?.imageStatuses, task.image, task.tag))
          }
        }
        // New workers report (a Pulling within the start delay, statusReporter.ts), and that write carries the spec's changes too.
        if (specChanged) {
          if (plan.start.length === 0) yield* options.reporter.specChanged
        } else yield* options.reporter.othersWrote(nodeImage.raw["status"])
      })
    )

  return {
    sync,
    running: () => {
      const running = new Map<string, number>()
      for (const [key] of workers) {
        const task = tasks.get(key)
        if (task !== undefined) running.set(key, task.version)
      }
      return running
    }
  }
})
