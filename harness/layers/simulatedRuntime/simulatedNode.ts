import { createHash } from "node:crypto"
import { Duration, Result } from "effect"
import { type ImageReference, parseImageReference } from "../../../src/api/imageReference.ts"
import { bandwidthLatency, type SimulatedDisk, type SimulatedRuntimeConfig } from "./config.ts"
import { PeerMirror } from "./peerMirror.ts"
import { SimulatedRuntime } from "./SimulatedRuntime.ts"

/**
 * The simulated runtime as `preheat simulated-daemon`, `preheat dev` and `preheat fleet`
 * run it in place of a node's containerd (the whole-system tests and the local-cluster mode). Pulls
 * take realistic, reproducible times (a link of `bytesPerSecond` plus a fixed overhead) so
 * parallelism, progress and controller restarts can be watched in real time.
 */
const simulatedLink = { bytesPerSecond: 50_000_000, overhead: Duration.millis(200) } as const

/**
 * A node's link to its peers in `preheat dev --p2p` (peerMirror.ts): 250 MB/s (2 Gbit/s), five
 * times the registry's, as a cluster's own network outruns its path to a registry outside it
 * (Spegel's benchmark ran on nodes of 12.5 Gbit/s). One peer serves any number of nodes at this
 * speed: the model has no upload limit per node.
 */
const simulatedPeerLink = { bytesPerSecond: 250_000_000 } as const

/** The peer-to-peer mirror of one simulated cluster, over the registry link and the peer link above. */
export const makeSimulatedPeerMirror = (): PeerMirror =>
  new PeerMirror({ registryBytesPerSecond: simulatedLink.bytesPerSecond, peerBytesPerSecond: simulatedPeerLink.bytesPerSecond })

const mebibyte = 1024 * 1024

/** A repository named `size-<n>mi` or `size-<n>gi` (its last path part, e.g. `bench.example/size-1gi`): an image of that size. */
const sizedRepository = /(?:^|\/)size-([1-9][0-9]{0,5})(mi|gi)$/

/**
 * Every image the simulated registry is asked for exists; its size comes from the repository's
 * name when it says one (`size-1gi`: 1 GiB, for benchmarks), else (20 to 250 MiB) from a hash of
 * the normalised reference, so every daemon, every run and the tests agree on it.
 */
export const simulatedImageSize = (ref: ImageReference): number => {
  const sized = sizedRepository.exec(ref.path)
  if (sized !== null) return Number(sized[1]) * (sized[2] === "gi" ? 1024 * mebibyte : mebibyte)
  const key = `${ref.domain}/${ref.path}:${ref.tag ?? "latest"}${ref.digest === undefined ? "" : `@${ref.digest}`}`
  const hash = createHash("sha256").update(key).digest().readUInt32BE(0)
  return (20 + (hash % 231)) * mebibyte
}

/** How long the simulated runtime takes to pull `image` (for tests that need a slow or fast pull). */
export const simulatedPullTime = (image: string): Duration.Duration => {
  const parsed = parseImageReference(image)
  if (Result.isFailure(parsed)) throw parsed.failure
  const reference = parsed.success
  return bandwidthLatency(simulatedLink)({ image, reference, size: simulatedImageSize(reference) })
}

/**
 * A registry host that throttles, to show issue 28's part 3 in `preheat dev`: the simulated
 * registry answers 429 (`toomanyrequests`) to the first two pulls of each image from a host named
 * `throttled.<anything>` (e.g. `throttled.example/app:1`) on each node, then serves it.
 */
const simulatedThrottles = (ref: ImageReference): number => (ref.domain.startsWith("throttled.") ? 2 : 0)

/**
 * A registry host that stalls, to show issue 39's part 4 in `preheat dev`: the first pull of each
 * image from a host named `stalled.<anything>` (e.g. `stalled.example/app:1`) on each node stops
 * getting bytes halfway, until the daemon's --pull-progress-timeout fails it; the retry is served.
 */
const simulatedStalls = (ref: ImageReference): number => (ref.domain.startsWith("stalled.") ? 1 : 0)

/**
 * A registry host that needs credentials, to try pull secrets and credential provider plugins in
 * `preheat dev` without a cloud: images from a host named `private.<anything>` (e.g.
 * `private.example/app:1`) are refused anonymously (401) and served to any credentials.
 */
const simulatedRefusesAnonymous = (ref: ImageReference): boolean => ref.domain.startsWith("private.")

/**
 * A progress report a second of the pull (at least one), as the live runtime reads containerd
 * (criLive.ts, progressInterval): ten for every pull, however short, made each simulated node's
 * daemon handle ten times the reports a real one does (issue 29: most of `preheat fleet`'s CPU is
 * its daemons' own work per pull).
 */
const simulatedProgressSteps = (latency: Duration.Duration): number => Math.max(1, Math.floor(Duration.toMillis(latency) / 1000))

/**
 * One simulated node's runtime: every image exists, pulled over `simulatedLink`, onto `disk`
 * (default 1 TiB; `preheat dev --node-disk` and `preheat fleet --node-disk` make it smaller);
 * `tagRevision`, shared by the nodes of one cluster, moves tags in their common registry; with
 * `peers` (`preheat dev --p2p`), the node named `node` pulls through the cluster's peer mirror.
 */
export const simulatedNodeLayer = (
  options: {
    readonly disk?: SimulatedDisk
    readonly tagRevision?: SimulatedRuntimeConfig["tagRevision"]
    readonly peers?: { readonly mirror: PeerMirror; readonly node: string }
  } = {}
) =>
  SimulatedRuntime.layer({
    latency: bandwidthLatency(simulatedLink),
    synthesizedSize: simulatedImageSize,
    throttles: simulatedThrottles,
    stalls: simulatedStalls,
    refusesAnonymous: simulatedRefusesAnonymous,
    progressSteps: simulatedProgressSteps,
    ...(options.disk === undefined ? {} : { disk: options.disk }),
    ...(options.tagRevision === undefined ? {} : { tagRevision: options.tagRevision }),
    ...(options.peers === undefined ? {} : { peerMirror: { ...options.peers, overhead: simulatedLink.overhead } })
  })
