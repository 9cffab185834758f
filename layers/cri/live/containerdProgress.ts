import { Clock, Duration, Effect, Fiber, Option, Semaphore } from "effect"
import type { PullProgress } from "../../../src/cri/CriRuntime.ts"
import type { GrpcCallFailed } from "./grpcCalls.ts"
import type { ContentInfo, IngestStatus, LeaseResource } from "./grpcPackages.ts"
import {
  awaitingBlobBytes,
  type BlobRef,
  bytesDone,
  distinctBlobs,
  ingestDigest,
  labelsMatch,
  manifestBlobs,
  runningPercent,
  totalBytes
} from "./pullProgress.ts"

/**
 * Real byte progress for CRI pulls on containerd, which CRI itself does not report.
 *
 * Attribution: CRI's PullImage on containerd takes a fresh lease before it fetches anything, and
 * every blob the pull commits, every ingest it opens, is recorded against that lease. So the lease
 * is the pull's identity inside containerd. We find ours by listing leases before sending
 * PullImage and watching for the one that appears after; a gate lets only one of our pulls be in
 * that window at a time (the gate is held for tens of milliseconds, not for the pull), and leases
 * already claimed by our other pulls are skipped. From the lease's committed content we take the
 * image manifest (the first fetched blob that parses as one; an index's chosen manifest follows
 * the index into the same lease) and check its distribution-source label names our repository,
 * which rejects a lease some other client (kubelet, ctr) happened to create in the same window. The manifest lists the config and layer digests and sizes: total is
 * their sum; done counts committed blobs whole and in-flight ingests (`Content/ListStatuses`,
 * refs `layer-sha256:...`) by their written offset. A layer shared with another pull running at
 * the same time is counted by both, which is true: both wait for it.
 *
 * Whether the pull waits on the registry (`awaitingBytes`, the daemon's stall clock): yes while its
 * lease holds no manifest yet (resolving, fetching the index and manifest), then while one of the
 * manifest's blobs has an ingest not yet written to its size; no once none has (containerd unpacks
 * the layers it has, which shows no bytes). Not said at all without a lease of ours, or while the
 * readings fail: what cannot be seen is not watched.
 *
 * Anything that goes wrong here only costs progress (it falls back to 0 then 100); it never fails
 * or slows the pull, which runs in its own fiber from the start.
 */

/** containerd's own API as the tracker needs it (calls in the `k8s.io` namespace). */
export interface ContainerdApi {
  readonly leaseIds: Effect.Effect<ReadonlyArray<string>, GrpcCallFailed>
  readonly leaseResources: (lease: string) => Effect.Effect<ReadonlyArray<LeaseResource>, GrpcCallFailed>
  readonly ingests: Effect.Effect<ReadonlyArray<IngestStatus>, GrpcCallFailed>
  readonly info: (digest: string) => Effect.Effect<Option.Option<ContentInfo>, GrpcCallFailed>
  readonly read: (digest: string) => Effect.Effect<Uint8Array, GrpcCallFailed>
}

export interface ProgressOptions {
  /** Between two readings of a pull's bytes. */
  readonly interval: Duration.Duration
  /** How long to wait for the pull's lease to appear before giving up on progress. */
  readonly leaseWait: Duration.Duration
  /** Between two looks for the lease. */
  readonly leasePoll: Duration.Duration
}

export const defaultProgressOptions: ProgressOptions = {
  interval: Duration.seconds(1),
  leaseWait: Duration.seconds(2),
  leasePoll: Duration.millis(20)
}

/** Manifests are small (registries cap them at 4 MiB); larger blobs are layers, never read. */
const maxManifestBytes = 4 * 1024 * 1024

export type Report = (progress: PullProgress) => Effect.Effect<void>

export interface PullTracker {
  /** Runs `pull` in a fiber of its own and reports its progress until it ends. */
  readonly track: <A, E>(image: string, pull: Effect.Effect<A, E>, report: Report) => Effect.Effect<A, E>
}

/** Keeps reported values monotone and reports only changes. */
const monotoneReporter = (report: Report) => {
  let last: PullProgress = { bytesDone: 0, bytesTotal: 0, percent: 0 }
  return {
    start: report(last),
    /** `awaitingBytes` undefined: this reading could not tell. */
    observe: (done: number, total: number, awaitingBytes: boolean | undefined): Effect.Effect<void> => {
      const bytesTotal = Math.max(last.bytesTotal, total)
      const bytesDone = Math.max(last.bytesDone, done)
      const percent = Math.max(last.percent, runningPercent(bytesDone, bytesTotal))
      const same = bytesTotal === last.bytesTotal && bytesDone === last.bytesDone && percent === last.percent
      if (same && awaitingBytes === last.awaitingBytes) return Effect.void
      last = { bytesDone, bytesTotal, percent, ...(awaitingBytes === undefined ? {} : { awaitingBytes }) }
      return report(last)
    },
    finish: Effect.suspend(() => {
      last = { bytesDone: Math.max(last.bytesDone, last.bytesTotal), bytesTotal: last.bytesTotal, percent: 100, awaitingBytes: false }
      return report(last)
    })
  }
}

/** One reading of a pull's lease. */
interface Reading {
  readonly done: number
  readonly total: number
  readonly awaitingBytes: boolean
}

/** One pull's reading of its lease: which manifest, which blobs are already here, which are coming. */
const leaseReader = (api: ContainerdApi, lease: string, image: string) => {
  /** Content of the lease that is not a manifest (layers, configs, indexes): never looked at again. */
  const examined = new Set<string>()
  /** Manifests seen, accepted or not yet: their blobs, so each is read once. */
  const parsed = new Map<string, ReadonlyArray<BlobRef>>()
  const accepted = new Map<string, ReadonlyArray<BlobRef>>()
  const present = new Set<string>()

  /**
   * Classifies new content of the lease until a manifest of our image is accepted. A manifest
   * whose labels name another repository is looked at again on the next reading: its label for
   * our repository may not be written yet (the blob came from elsewhere before). If it never
   * comes, the lease was someone else's, and this pull simply shows no byte progress.
   */
  const findManifest = (content: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      for (const digest of content) {
        if (accepted.size > 0) return
        if (examined.has(digest)) continue
        const info = yield* api.info(digest)
        if (Option.isNone(info)) continue
        let blobs = parsed.get(digest)
        if (blobs === undefined) {
          blobs = info.value.size > maxManifestBytes ? undefined : manifestBlobs(yield* api.read(digest))
          if (blobs === undefined) {
            examined.add(digest)
            continue
          }
          parsed.set(digest, blobs)
        }
        if (labelsMatch(info.value.labels, image)) accepted.set(digest, blobs)
      }
    })

  return Effect.gen(function* () {
    const resources = yield* api.leaseResources(lease)
    const content = resources.filter((r) => r.type === "content").map((r) => r.id)
    yield* findManifest(content)
    const blobs = distinctBlobs([...accepted.values()])
    // No manifest of ours yet: containerd is still resolving, or fetching the index or manifest,
    // from the registry. Only another repository's manifest (the lease may be another client's):
    // nothing to say the pull waits.
    if (blobs.length === 0) return { done: 0, total: 0, awaitingBytes: parsed.size === 0 } satisfies Reading
    for (const digest of content) present.add(digest)
    const offsets = new Map<string, number>()
    for (const ingest of yield* api.ingests) {
      const digest = ingestDigest(ingest.ref)
      if (digest !== undefined) offsets.set(digest, Math.max(offsets.get(digest) ?? 0, ingest.offset))
    }
    // A blob already in the store before this pull is neither ingested nor always in the lease.
    for (const blob of blobs) {
      if (present.has(blob.digest) || offsets.has(blob.digest)) continue
      if (Option.isSome(yield* api.info(blob.digest))) present.add(blob.digest)
    }
    return {
      done: bytesDone(blobs, present, offsets),
      total: totalBytes(blobs),
      awaitingBytes: awaitingBlobBytes(blobs, present, offsets)
    } satisfies Reading
  })
}

export const makePullTracker = (api: ContainerdApi, options: ProgressOptions = defaultProgressOptions): Effect.Effect<PullTracker> =>
  Effect.gen(function* () {
    const gate = yield* Semaphore.make(1)
    const claimed = new Set<string>()

    /** The lease that appeared after `before` and is nobody's yet, while the pull still runs. */
    const awaitLease = (before: ReadonlySet<string>, pull: Fiber.Fiber<unknown, unknown>) =>
      Effect.gen(function* () {
        const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(options.leaseWait)
        while (true) {
          const ids = yield* api.leaseIds
          const fresh = ids.find((id) => !before.has(id) && !claimed.has(id))
          if (fresh !== undefined) return Option.some(fresh)
          if (pull.pollUnsafe() !== undefined || (yield* Clock.currentTimeMillis) >= deadline) return Option.none<string>()
          yield* Effect.sleep(options.leasePoll)
        }
      }).pipe(Effect.orElseSucceed(() => Option.none<string>()))

    /** Sends the pull and claims its lease; `claim` records it so that it is released however we end. */
    const startPull = <A, E>(pull: Effect.Effect<A, E>, claim: (lease: string) => void) =>
      gate.withPermits(1)(
        Effect.gen(function* () {
          // A runtime without containerd's lease API (CRI-O, cri-dockerd) fails here: no progress.
          const before = yield* Effect.option(api.leaseIds)
          const fiber = yield* Effect.forkChild(pull)
          const lease = Option.isNone(before) ? Option.none<string>() : yield* awaitLease(new Set(before.value), fiber)
          if (Option.isSome(lease)) {
            claimed.add(lease.value)
            claim(lease.value)
          }
          return { fiber, lease }
        })
      )

    const track = <A, E>(image: string, pull: Effect.Effect<A, E>, report: Report): Effect.Effect<A, E> => {
      let ours: string | undefined
      return Effect.gen(function* () {
        const reporter = monotoneReporter(report)
        yield* reporter.start
        const { fiber, lease } = yield* startPull(pull, (id) => (ours = id))
        if (Option.isNone(lease))
          yield* Effect.logDebug(`no containerd lease seen for the pull of ${image}: progress shows 0 until it ends`)
        const poller = Option.isNone(lease)
          ? undefined
          : yield* Effect.forkChild(
              Effect.gen(function* () {
                const read = leaseReader(api, lease.value, image)
                while (true) {
                  const reading = yield* Effect.option(read)
                  yield* Option.isSome(reading)
                    ? reporter.observe(reading.value.done, reading.value.total, reading.value.awaitingBytes)
                    : reporter.observe(0, 0, undefined)
                  yield* Effect.sleep(options.interval)
                }
              })
            )
        const result = yield* Fiber.join(fiber).pipe(Effect.ensuring(poller === undefined ? Effect.void : Fiber.interrupt(poller)))
        yield* reporter.finish
        return result
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (ours !== undefined) claimed.delete(ours)
          })
        )
      )
    }

    return { track }
  })
