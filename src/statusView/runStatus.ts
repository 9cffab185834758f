import { Clock, Duration, Effect, Queue } from "effect"
import type { Scope } from "effect"
import type { KubeApi } from "../kube/KubeApi.ts"
import { reflect } from "../kube/reflector.ts"
import { resources } from "../kube/resources.ts"
import { makeStore } from "../kube/store.ts"
import type { Store } from "../kube/store.ts"
import { watcher } from "../kube/watcher.ts"
import { buildModel, statusNodeImage } from "./buildModel.ts"
import { render } from "./render.ts"
import type { StatusModel } from "./model.ts"
import type { Screen } from "./screen.ts"

export interface StatusOptions {
  readonly namespace: string
  readonly job?: string | undefined
  readonly watch: boolean
  readonly screen: Screen
  /** Only jobs with these labels (a list's children need them too); default all. */
  readonly labelSelector?: string | undefined
  /** With --watch: stop after the frame of a model this accepts, instead of running until interrupted. */
  readonly until?: ((model: StatusModel) => boolean) | undefined
  /** preheat's startup taint key: the view also lists the nodes it holds, with their pulls. */
  readonly warmTaintKey?: string | undefined
  /** How long the first lists may take before giving up (not in --watch, which waits). */
  readonly syncTimeout?: Duration.Input
}

/** Redraws at most this often, however busy the watches are: a frame is for a human. */
const minFrameGap = Duration.millis(250)
/** A terminal frame is redrawn at least this often, so elapsed times and the ETA move. */
const tick = Duration.seconds(1)

class StatusError extends Error {}

/** The typed views a store holds. */
function* views<A>(store: Store<A>): IterableIterator<A> {
  for (const stored of store.entries()) yield stored.view
}

/**
 * Watches the jobs of one namespace and all NodeImages (a job's nodes are cluster-wide) and
 * draws the view: once, when the lists are in, or on every change with --watch.
 */
export const runStatus = Effect.fnUntraced(function* (
  options: StatusOptions
): Effect.fn.Return<StatusModel, StatusError, KubeApi | Scope.Scope> {
  const changes = yield* Queue.sliding<void>(1)
  const changed = () => Queue.offer(changes, undefined).pipe(Effect.asVoid)
  const namespaced = {
    namespace: options.namespace,
    ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector })
  }
  const pullJobs = makeStore(resources.imagePullJob)
  const listJobs = makeStore(resources.imageListPullJob)
  // Stores replace objects on change and never mutate them, so a redraw decodes only what changed.
  const nodeImages = makeStore(resources.nodeImage, { decode: statusNodeImage })
  yield* reflect(pullJobs, watcher(resources.imagePullJob, namespaced), changed)
  yield* reflect(listJobs, watcher(resources.imageListPullJob, namespaced), changed)
  yield* reflect(nodeImages, watcher(resources.nodeImage, {}), changed)
  const nodes = makeStore(resources.node)
  if (options.warmTaintKey !== undefined) yield* reflect(nodes, watcher(resources.node, {}), changed)
  const warmTaintKey = options.warmTaintKey

  const synced = Effect.all([pullJobs.synced, listJobs.synced, nodeImages.synced, ...(warmTaintKey === undefined ? [] : [nodes.synced])], {
    discard: true
  })
  yield* options.watch
    ? synced
    : synced.pipe(
        Effect.timeoutOrElse({
          duration: options.syncTimeout ?? Duration.seconds(30),
          orElse: () => Effect.fail(new StatusError("could not list the jobs, NodeImages and Nodes (see the warnings above)"))
        })
      )

  const frame = Effect.map(Clock.currentTimeMillis, (now) => {
    const model = buildModel({
      namespace: options.namespace,
      job: options.job,
      imagePullJobs: pullJobs.values(),
      imageListPullJobs: listJobs.values(),
      nodeImages: views(nodeImages),
      warming: warmTaintKey === undefined ? undefined : { nodes: nodes.values(), taintKey: warmTaintKey }
    })
    return { model, lines: render(model, now, options.screen.width(), options.screen.mode) }
  })

  if (!options.watch) {
    const { model, lines } = yield* frame
    if (options.job !== undefined && model.jobs.length === 0) {
      return yield* Effect.fail(
        new StatusError(`no ImagePullJob or ImageListPullJob named ${options.job} in namespace ${options.namespace}`)
      )
    }
    options.screen.draw(lines)
    return model
  }

  // Plain output is a log: a new frame only when something changed, never for the clock alone.
  const next =
    options.screen.mode === "terminal" ? Queue.take(changes).pipe(Effect.timeoutOption(tick), Effect.asVoid) : Queue.take(changes)
  while (true) {
    const { model, lines } = yield* frame
    options.screen.draw(lines)
    if (options.until?.(model) === true) return model
    yield* Effect.sleep(minFrameGap)
    yield* next
  }
})
