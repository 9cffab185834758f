import { Duration, Effect, Fiber, Option } from "effect"
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
  newestManifest,
  runningPercent,
  totalBytes
} from "./pullProgress.ts"

/**
 * Real byte progress for CRI pulls on containerd, which CRI itself does not report.
 *
 * Attribution: each pull is sent under a lease of ours (pullLeases.ts), and every blob it commits,
 * every ingest it opens, is recorded against that lease. From the lease's committed content we
 * take the image manifest (a fetched blob that parses as one and whose distribution-source label
 * names our repository; an index's chosen manifest follows the index into the same lease; of two,
 * the newer, should the tag have moved between two attempts under one lease). The manifest lists
 * the config and layer digests and sizes: total is their sum; done counts committed blobs whole
 * and in-flight ingests (`Content/ListStatuses`, refs `layer-sha256:...`) by their written offset,
 * which includes what an earlier attempt under the same lease left. A layer shared with another
 * pull running at the same time is counted by both, which is true: both wait for it.
 *
 * Whether the pull waits on the registry (`awaitingBytes`, the daemon's stall clock): yes from its
 * start (a pull begins by resolving the reference with the registry) and while its lease holds no
 * manifest yet (fetching the index and manifest), then while one of the manifest's blobs has an
 * ingest not yet written to its size; no once none has (containerd unpacks the layers it has,
 * which shows no bytes). Not said at all without a lease, or while the readings fail: what cannot
 * be seen is not watched.
 *
 * The first reading is one interval in: a pull over within it (most, of small images on a near
 * registry) costs containerd no reading at all, and before it nothing would be in the lease.
 *
 * Anything that goes wrong here only costs progress (it falls back to 0 then 100); it never fails
 * or slows the pull.
 */

/** containerd's own API as the tracker needs it (calls in the `k8s.io` namespace). */
export interface ContainerdApi {
  readonly leaseResources: (lease: string) => Effect.Effect<ReadonlyArray<LeaseResource>, GrpcCallFailed>
  readonly ingests: Effect.Effect<ReadonlyArray<IngestStatus>, GrpcCallFailed>
  readonly info: (digest: string) => Effect.Effect<Option.Option<ContentInfo>, GrpcCallFailed>
  readonly read: (digest: string) => Effect.Effect<Uint8Array, GrpcCallFailed>
}

export interface ProgressOptions {
  /** Between two readings of a pull's bytes. */
  readonly interval: Duration.Duration
}

export const defaultProgressOptions: ProgressOptions = { interval: Duration.seconds(1) }

/** Manifests are small (registries cap them at 4 MiB); larger blobs are layers, never read. */
const maxManifestBytes = 4 * 1024 * 1024

export type Report = (progress: PullProgress) => Effect.Effect<void>

export interface PullTracker {
  /** Runs `pull`, made under `lease`, and reports its progress until it ends; without a lease, 0 then 100. */
  readonly track: <A, E>(image: string, lease: string | undefined, pull: Effect.Effect<A, E>, report: Report) => Effect.Effect<A, E>
}

/** Keeps reported values monotone and reports only changes; `watched`: the pull awaits the registry from its start. */
const monotoneReporter = (report: Report, watched: boolean) => {
  let last: PullProgress = { bytesDone: 0, bytesTotal: 0, percent: 0, ...(watched ? { awaitingBytes: true } : {}) }
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
      last = {
        bytesDone: Math.max(last.bytesDone, last.bytesTotal),
        bytesTotal: last.bytesTotal,
        percent: 100,
        // A pull never watched stays so: without a lease the runtime showed no bytes.
        ...(last.awaitingBytes === undefined ? {} : { awaitingBytes: false })
      }
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

const millisOf = (timestamp: ContentInfo["created_at"]): number =>
  timestamp === null ? 0 : timestamp.seconds * 1000 + Math.floor(timestamp.nanos / 1e6)

/** One pull's reading of its lease: which manifest, which blobs are already here, which are coming. */
const leaseReader = (api: ContainerdApi, lease: string, image: string) => {
  /** Content of the lease that is no manifest (layers, configs, indexes): never looked at again. */
  const examined = new Set<string>()
  /** The lease's manifests: their blobs, when containerd wrote them, and whether their labels name our repository. */
  const manifests = new Map<string, { readonly blobs: ReadonlyArray<BlobRef>; readonly createdAt: number; readonly ours: boolean }>()
  const present = new Set<string>()

  /**
   * Classifies new content of the lease. Each manifest is read once; one whose labels name another
   * repository is asked again on the next reading: its label for our repository may not be written
   * yet (the blob came from elsewhere before).
   */
  const classify = (content: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      for (const digest of content) {
        const known = manifests.get(digest)
        if (examined.has(digest) || known?.ours === true) continue
        const info = yield* api.info(digest)
        if (Option.isNone(info)) continue
        const blobs = known?.blobs ?? (info.value.size > maxManifestBytes ? undefined : manifestBlobs(yield* api.read(digest)))
        if (blobs === undefined) {
          examined.add(digest)
          continue
        }
        manifests.set(digest, { blobs, createdAt: millisOf(info.value.created_at), ours: labelsMatch(info.value.labels, image) })
      }
    })

  return Effect.gen(function* () {
    const resources = yield* api.leaseResources(lease)
    const content = resources.filter((r) => r.type === "content").map((r) => r.id)
    yield* classify(content)
    const manifest = newestManifest([...manifests.values()].filter((m) => m.ours))
    // No manifest of ours yet: containerd is still resolving, or fetching the index or manifest,
    // from the registry. Only another repository's manifest: nothing to say the pull waits.
    if (manifest === undefined) return { done: 0, total: 0, awaitingBytes: manifests.size === 0 } satisfies Reading
    const blobs = distinctBlobs([manifest.blobs])
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

export const makePullTracker = (api: ContainerdApi, options: ProgressOptions = defaultProgressOptions): PullTracker => ({
  track: <A, E>(image: string, lease: string | undefined, pull: Effect.Effect<A, E>, report: Report): Effect.Effect<A, E> =>
    Effect.gen(function* () {
      const reporter = monotoneReporter(report, lease !== undefined)
      yield* reporter.start
      const read = lease === undefined ? undefined : leaseReader(api, lease, image)
      const poller =
        read === undefined
          ? undefined
          : yield* Effect.forkChild(
              Effect.forever(
                Effect.gen(function* () {
                  yield* Effect.sleep(options.interval)
                  const reading = yield* Effect.option(read)
                  yield* Option.isSome(reading)
                    ? reporter.observe(reading.value.done, reading.value.total, reading.value.awaitingBytes)
                    : reporter.observe(0, 0, undefined)
                })
              )
            )
      const result = yield* pull.pipe(Effect.ensuring(poller === undefined ? Effect.void : Fiber.interrupt(poller)))
      yield* reporter.finish
      return result
    })
})
