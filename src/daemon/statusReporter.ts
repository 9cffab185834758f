import { isDeepStrictEqual } from "node:util"
import { Clock, Data, Duration, Effect, Result, Schedule } from "effect"
import type { Scope } from "effect"
import type { KubeletImageVerification } from "../api/kubeletImageVerification.ts"
import type { ImageTagStatus } from "../api/nodeImage.ts"
import type { ReportedImages } from "../api/nodeStatusImages.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import { applyMergePatch, mergePatchBetween } from "../json/mergePatch.ts"
import { othersChangedStatus } from "./statusDrift.ts"
import { resources } from "../kube/resources.ts"
import type { Store } from "../kube/store.ts"
import { Scheduler } from "../workqueue/Scheduler.ts"
import type { InitialTag } from "./firstSync.ts"
import type { SpecView, StoredNodeImage } from "./nodeImageSpec.ts"
import { desiredNodeStatus } from "./nodeStatus.ts"
import { isOutcome, reportDue } from "./statusCadence.ts"
import type { StatusCadence } from "./statusCadence.ts"
import { markUnreported } from "./unreportedTags.ts"
import type { UnreportedRule } from "./unreportedTags.ts"

/** Owns the NodeImage status of this node: what workers report goes out through here. */
export interface StatusReporter {
  /**
   * A worker's new status for its tag: a new phase goes out at once, but a pull's start (Pulling)
   * only after the start delay, with its outcome if it ended by then; progress at most once per
   * interval; an outcome with the other pulls' still running, up to the outcome delay (statusCadence.ts).
   */
  readonly report: (image: string, status: ImageTagStatus) => Effect.Effect<void>
  /** The tag's worker is gone (tag removed or replaced by a new version). */
  readonly forget: (image: string, tag: string) => Effect.Effect<void>
  /** The spec changed: counters, dropped tags, firstSyncStatus may need a write. */
  readonly specChanged: Effect.Effect<void>
  /**
   * A version of the NodeImage with the spec unchanged arrived, with this status: unless it is
   * the status this daemon last left, someone else changed it, and the status is checked (a
   * write only if it is no longer what the daemon wants).
   */
  readonly othersWrote: (status: unknown) => Effect.Effect<void>
  /** The tags present when the daemon first saw its NodeImage (for firstSyncStatus); set once, written with the next write. */
  readonly setInitial: (tags: ReadonlyArray<InitialTag>) => Effect.Effect<void>
  /**
   * The node's kubelet image verification as just read (kubeletConfig/): written at once if the
   * stored status says otherwise, else nothing (it is read again every minute and rarely changes).
   */
  readonly setVerification: (verification: KubeletImageVerification) => Effect.Effect<void>
  /**
   * The node's status.images changed: the Succeeded tags' `unreported` marks are judged again
   * (unreportedTags.ts), and written with the next write the cadence allows if one changes.
   */
  readonly listingChanged: Effect.Effect<void>
}

const statusKey = "status"

/** A status write the API server did not take. */
export class StatusWriteFailed extends Data.TaggedError("StatusWriteFailed")<{ readonly message: string }> {}

/** Failed status writes are retried 1 s doubling to 30 s, without end: the status must land. */
export const statusWriteRetry: Schedule.Schedule<Duration.Duration, StatusWriteFailed> = Schedule.min([
  Schedule.exponential(Duration.seconds(1)),
  Schedule.spaced(Duration.seconds(30))
]).pipe(Schedule.setInputType<StatusWriteFailed>())

/**
 * Coalesced, rate-limited status writes for one NodeImage (SPEC §3, §4.9). One queue key stands
 * for "the status may differ from what is stored"; the work queue keeps the earliest due time of
 * many requests, so a burst of reports becomes one write. Each write is a merge patch computed
 * with `mergePatchBetween` from the stored status to the wanted one.
 *
 * The patch carries no resourceVersion, as the kubelet's node status patches and controller-runtime's
 * default status patch do not: the daemon is the status's writer, and the controller's task writes
 * to the spec between its read and its patch made every such patch conflict and be read again (0.48
 * conflicts and 0.48 GETs per node and job in bench:scale at N = 200). Another writer of the status
 * (the controller failing a silent daemon's tags, a person) is caught instead: a version of the
 * NodeImage that is not this daemon's own write and leaves the spec alone is checked against what
 * the daemon wants (`othersWrote`), and so is the answer to each write, which holds whatever the
 * server merged the patch into.
 */
export const makeStatusReporter = Effect.fnUntraced(function* (options: {
  readonly nodeName: string
  readonly nodeImages: Store<SpecView>
  readonly cadence: StatusCadence
  /** The node's status.images as read now; undefined while its Node is not read (the marks are kept as stored). */
  readonly listing: () => ReportedImages | undefined
  readonly unreported: UnreportedRule
}): Effect.fn.Return<StatusReporter, never, KubeApi | Scheduler | Scope.Scope> {
  const api = yield* KubeApi
  const queue = yield* (yield* Scheduler).queue("nodeimage-status")
  const { cadence } = options
  const live = new Map<string, Map<string, ImageTagStatus>>()
  /** When each pull whose Pulling is not yet written started: its progress waits for the start delay too. */
  const unwrittenStarts = new Map<string, number>()
  let initial: ReadonlyArray<InitialTag> | undefined
  let verification: KubeletImageVerification | undefined
  let lastWriteAt = Number.NEGATIVE_INFINITY
  /** The status as this daemon last left it (its last write's answer): a version carrying it is no news. */
  let shown: unknown
  /** A write is on its way: versions seen meanwhile are judged once its answer is in. */
  let writing = false

  /** Asks for a write at `due` (epoch milliseconds), or earlier if one is asked for already. */
  const writeAt = (due: number) => Effect.flatMap(Clock.currentTimeMillis, (now) => queue.add(statusKey, Math.max(0, due - now)))

  const schedule = (urgent: boolean) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => writeAt(urgent ? now : lastWriteAt + cadence.progressInterval))

  /** Whether a tag other than `key` is still to finish. */
  const othersRunning = (key: string): boolean => {
    for (const [image, tags] of live) {
      for (const [tag, status] of tags) if (!isOutcome(status.phase) && `${image}\u0000${tag}` !== key) return true
    }
    return false
  }

  /**
   * Every status write of a pull is a NodeImage version that the API server stores and sends to
   * every watcher (the controller, this daemon). A pull that ends within the start delay writes
   * only its outcome; a longer one shows Pulling once the delay is over, then progress at most
   * once per interval (docs/benchmarks.md, "Success in status, not in Events"); an outcome waits
   * for the other pulls still running, briefly, to go out with theirs (statusCadence.ts).
   */
  const report = (image: string, status: ImageTagStatus) =>
    Effect.gen(function* () {
      let tags = live.get(image)
      if (tags === undefined) live.set(image, (tags = new Map()))
      const previous = tags.get(status.tag)
      tags.set(status.tag, status)
      const key = `${image}\u0000${status.tag}`
      const changed = previous === undefined || previous.phase !== status.phase || previous.version !== status.version
      const now = yield* Clock.currentTimeMillis
      if (status.phase !== "Pulling") unwrittenStarts.delete(key)
      else if (changed) unwrittenStarts.set(key, now)
      const due = reportDue(cadence, status.phase, {
        now,
        lastWriteAt,
        changed,
        unwrittenStart: unwrittenStarts.get(key),
        othersRunning: isOutcome(status.phase) && othersRunning(key)
      })
      yield* writeAt(due)
    })

  const forget = (image: string, tag: string) =>
    Effect.suspend(() => {
      unwrittenStarts.delete(`${image}\u0000${tag}`)
      const tags = live.get(image)
      if (tags?.delete(tag) !== true) return Effect.void
      if (tags.size === 0) live.delete(image)
      return schedule(true)
    })

  /** Writes what differs between the stored status and the wanted one, if anything. */
  const writeOnce = ({ raw: current, view: spec }: StoredNodeImage) =>
    Effect.gen(function* () {
      // The puller has logged why; nothing sensible can be counted against a spec it cannot read.
      if (Result.isFailure(spec)) return
      const stored = (current["status"] ?? {}) as Parameters<typeof desiredNodeStatus>[0]["stored"] & object
      const now = yield* Clock.currentTimeMillis
      const desired = desiredNodeStatus({ spec: spec.success.spec, stored, live, initial, now, verification })
      const marked = markUnreported(desired.imageStatuses, options.listing(), now, options.unreported)
      // A tag whose grace ends later is judged then: the queue keeps the earliest request, so this one is made at every write.
      if (marked.judgeAt !== undefined) yield* writeAt(marked.judgeAt)
      const diff = mergePatchBetween(stored, { ...desired, imageStatuses: marked.imageStatuses })
      if (diff === undefined) {
        shown = stored
        return
      }
      lastWriteAt = now
      // What is live goes out with this write: no start waits any more.
      unwrittenStarts.clear()
      writing = true
      const written = yield* api
        .patch(resources.nodeImage, { name: options.nodeName }, { status: diff }, "status")
        .pipe(Effect.ensuring(Effect.sync(() => (writing = false))))
      yield* options.nodeImages.written(written)
      // As the store holds it: the watch's echo of this write is not newer, so it leaves this object there.
      const held = options.nodeImages.get(options.nodeName)
      shown =
        held !== undefined && held.metadata.resourceVersion === written.metadata.resourceVersion
          ? (held["status"] ?? {})
          : (written["status"] ?? {})
      // The patch lands on the server's status, not necessarily the one it was computed from (the
      // answer shows it), and a newer version may have come in while it was on its way (the store
      // holds it): either is another writer's, and the status is checked again.
      if (held !== undefined && !isDeepStrictEqual(held["status"] ?? {}, shown)) yield* schedule(true)
      else if (othersChangedStatus(shown, applyMergePatch(stored, diff), diff)) yield* schedule(true)
    })

  const write = Effect.andThen(
    // Reports from other fibers ready at this same instant join this write instead of the next.
    Effect.yieldNow,
    Effect.suspend(() => {
      const current = options.nodeImages.entry(options.nodeName)
      return current === undefined ? Effect.void : writeOnce(current)
    }).pipe(
      Effect.catch((error) =>
        // Gone meanwhile: no status to write.
        error._tag === "NotFound"
          ? Effect.void
          : Effect.fail(new StatusWriteFailed({ message: error.message === "" ? error._tag : `${error._tag}: ${error.message}` }))
      )
    )
  ).pipe(Effect.withSpan("StatusReporter.write", { attributes: { node: options.nodeName } }))

  /**
   * A failed write keeps the key while it waits out the backoff, so nothing else goes out before
   * the retry (phase changes included); what was reported meanwhile goes with it.
   */
  const retry = statusWriteRetry.pipe(
    Schedule.tap(({ input, duration }) =>
      Effect.logWarning("could not write the NodeImage status; retrying").pipe(
        Effect.annotateLogs({ node: options.nodeName, failure: input.message, retryIn: `${Duration.toMillis(duration) / 1000}s` })
      )
    )
  )

  const writer = Effect.gen(function* () {
    const key = yield* queue.take
    yield* Effect.retry(write, retry)
    yield* queue.done(key)
  })
  yield* Effect.forkScoped(Effect.forever(writer))

  return {
    report,
    forget,
    specChanged: schedule(true),
    othersWrote: (status) => (writing || isDeepStrictEqual(status ?? {}, shown) ? Effect.void : schedule(true)),
    setInitial: (tags) =>
      Effect.sync(() => {
        initial ??= tags
      }),
    setVerification: (next) =>
      Effect.suspend(() => {
        verification = next
        return schedule(true)
      }),
    listingChanged: schedule(false)
  }
})
