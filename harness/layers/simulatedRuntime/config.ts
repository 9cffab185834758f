import { Duration } from "effect"
import type { ImageReference } from "../../../src/api/imageReference.ts"
import type { RuntimeVersion } from "../../../src/cri/CriRuntime.ts"
import type { CriError } from "../../../src/cri/errors.ts"
import type { PeerMirror } from "./peerMirror.ts"
import type { RecordLimits } from "./records.ts"

// How a simulated runtime is set up: its node's images, its registry, pull times and failures.

/** An image on the node at start: its references (tagged or by digest) and its id. */
export interface SimulatedImage {
  readonly references: ReadonlyArray<string>
  readonly id: string
  readonly size?: number
}

/** What a registry serves for a reference (`name:tag` or `name@digest`). */
export interface RegistryImage {
  readonly reference: string
  readonly id: string
  /** The manifest digest; made up from the id when not given. */
  readonly digest?: string
  readonly size?: number
}

export interface LatencyInput {
  readonly image: string
  readonly reference: ImageReference
  readonly size: number
}

export type PullLatency = Duration.Input | ((pull: LatencyInput) => Duration.Input)

/** Latency of a link: a fixed overhead plus size / bandwidth, for realistic local-cluster pulls. */
export const bandwidthLatency =
  (options: { readonly bytesPerSecond: number; readonly overhead?: Duration.Input }) =>
  (pull: LatencyInput): Duration.Duration =>
    Duration.sum(
      Duration.fromInputUnsafe(options.overhead ?? Duration.zero),
      Duration.millis(Math.ceil((pull.size * 1000) / options.bytesPerSecond))
    )

/** The node's disk that holds the images: pulled images fill it, removed ones free it. */
export interface SimulatedDisk {
  /** The filesystem's size in bytes. */
  readonly capacity: number
  /** Bytes taken by all but the images (the system, logs, containers' layers); default 0. */
  readonly otherUsed?: number
}

/** Where the simulated runtime says its images live, as containerd's overlayfs snapshotter does. */
export const simulatedImageFsMountpoint = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"

/**
 * A node's image disk unless told otherwise: 1 TiB, empty. Simulated nodes have no kubelet image
 * GC, so every image a long soak or a dev cluster running for days pulls stays: 1 TiB holds about
 * 7,000 of `preheat dev`'s 20-250 MiB images before the default --min-free-disk of 10% refuses more.
 */
export const defaultSimulatedDisk: SimulatedDisk = { capacity: 1024 ** 4 }

export interface SimulatedRuntimeConfig {
  /** On the node at start; also served by the registry, unless `registry` says otherwise. */
  readonly images?: ReadonlyArray<SimulatedImage>
  readonly registry?: ReadonlyArray<RegistryImage>
  /** Time a pull takes; default 1 second. Per-image overrides: `setLatency`, `hang`. */
  readonly latency?: PullLatency
  /** Images the registry was not told about: made up on first pull (default) or not found. */
  readonly unknownImages?: "synthesize" | "notFound"
  /**
   * Progress reports between start and success, evenly spread over the latency; default 10. A
   * function of the pull's latency gives each pull its own count (`simulatedNodeLayer`: one a
   * second, as the live runtime reads containerd).
   * 0 acts like a runtime that shows no progress: 0 of unknown, then 100 of unknown.
   */
  readonly progressSteps?: number | ((latency: Duration.Duration) => number)
  /**
   * The registry's current revision of a tag (`name:tag`, normalised): a made-up image is made up
   * again, with a new id and manifest digest, whenever its tag's revision changes, as if someone had
   * pushed to the tag. Read at each pull, so a revision changed meanwhile moves the tag for every
   * node that pulls it next (`preheat dev` reads them from a ConfigMap: harness/cluster/devRegistry.ts).
   */
  readonly tagRevision?: (reference: ImageReference) => string | undefined
  /** How many pulls of a reference the registry throttles (HTTP 429) before serving it; default none. */
  readonly throttles?: (reference: ImageReference) => number
  /**
   * How many pulls of a reference stall halfway (the registry stops sending, the connection held)
   * before one is served; default none. Scripted stalls (`stall`) come first.
   */
  readonly stalls?: (reference: ImageReference) => number
  /** References the registry serves only with credentials (a username or a token): an anonymous pull gets 401. Default none. */
  readonly refusesAnonymous?: (reference: ImageReference) => boolean
  /** Size of made-up images; default 10 MiB. */
  readonly defaultSize?: number
  /** Size of a made-up image by its reference, instead of `defaultSize` (simulated nodes vary sizes). */
  readonly synthesizedSize?: (reference: ImageReference) => number
  readonly version?: RuntimeVersion
  /** `unsupported` acts like CRI-O or cri-dockerd: no containerd images service. Default `containerd`. */
  readonly imageLabels?: "containerd" | "unsupported"
  /** The disk the images fill (ImageFsInfo, FilesystemStats); default `defaultSimulatedDisk`. */
  readonly disk?: SimulatedDisk
  /** How many call and pull records are kept (records.ts; default the newest 10,000 of each, about 4 MiB). */
  readonly recordLimits?: RecordLimits
  /**
   * Peer-to-peer mode (`preheat dev --p2p`): this node, `node`, pulls through a mirror shared with
   * the other nodes (peerMirror.ts), layer by layer, each from the node itself, a peer or the
   * registry at that link's speed, after `overhead` (the manifest); `latency`, `setLatency` and
   * `progressSteps` no longer apply (progress is reported once a second and at each layer's end).
   */
  readonly peerMirror?: { readonly mirror: PeerMirror; readonly node: string; readonly overhead: Duration.Duration }
}

export type FailureKind = CriError["_tag"]

/** A stalled transfer: where it stops, and for how many pulls. */
export interface StallRule {
  /** The share of the transfer done when the bytes stop, 0 to 100; default 50. */
  readonly atPercent?: number
  /** How many pulls stall before pulls work again; default 1. */
  readonly times?: number | "always"
}

export interface FailureRule {
  readonly kind: FailureKind
  /** How many pulls fail before pulls work again; default 1. */
  readonly times?: number | "always"
  /**
   * When the failure comes, counted from the start of the pull: default at once, and at the
   * request's timeout for DeadlineExceeded. Later than the timeout means DeadlineExceeded.
   */
  readonly after?: Duration.Input
  readonly message?: string
}
