import { Context } from "effect"
import type { Duration, Effect, Option } from "effect"
import type { CriError } from "./errors.ts"

export interface RuntimeVersion {
  readonly runtimeName: string
  readonly runtimeVersion: string
  readonly runtimeApiVersion: string
}

/** runtime.v1 Image: what the node has. */
export interface ImageInfo {
  readonly id: string
  readonly repoTags: ReadonlyArray<string>
  readonly repoDigests: ReadonlyArray<string>
  readonly size: number
}

/**
 * runtime.v1 FilesystemUsage of an image filesystem: where the runtime keeps images and how much of
 * it they use. CRI says nothing of the filesystem's size or free space (the kubelet reads those
 * with statfs of the mountpoint): FilesystemStats.ts.
 */
export interface ImageFsUsage {
  readonly mountpoint: string
  /** What the runtime's images take there (containerd: its snapshotter's directory, measured now and then). */
  readonly usedBytes: number
  readonly inodesUsed: number
}

/** runtime.v1 AuthConfig: one set of registry credentials for one pull. Never logged. */
export interface RegistryAuth {
  readonly username?: string
  readonly password?: string
  readonly auth?: string
  readonly identityToken?: string
  readonly registryToken?: string
}

/**
 * How far one pull has come. percent is 0..100, never decreases within one pullImage call, and is
 * 100 only once the runtime has reported success. Bytes are the image's compressed blobs (config
 * and layers); bytesTotal is 0 until the runtime has fetched the manifest, and stays 0 for
 * runtimes that show no progress (they report 0, then 100).
 */
export interface PullProgress {
  readonly bytesDone: number
  readonly bytesTotal: number
  readonly percent: number
  /**
   * Whether the pull waits on bytes from the registry now, as far as the runtime shows it: true
   * before the image's manifest is in and while one of its blobs is being written; false while
   * none is (containerd unpacking what it fetched, the blobs already on the node). Absent from
   * runtimes, and pulls, whose bytes are not seen: `--pull-progress-timeout` does not watch those.
   */
  readonly awaitingBytes?: boolean
}

export interface PullRequest {
  /** A normalised reference: `name:tag` or `name@sha256:...`. */
  readonly image: string
  readonly auth?: RegistryAuth
  readonly sandboxConfig?: {
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
  }
  readonly timeout: Duration.Duration
  /** Called with each change of progress while the pull runs (keep it quick: the pull waits). */
  readonly onProgress?: (progress: PullProgress) => Effect.Effect<void>
}

/**
 * The node's container runtime, as CRI's ImageService (gRPC over the runtime's unix socket).
 * Live body: @grpc/grpc-js (layers/cri/live/criLive.ts); simulated body, driven by Clock: harness/layers/simulatedRuntime/.
 */
export class CriRuntime extends Context.Service<
  CriRuntime,
  {
    readonly version: Effect.Effect<RuntimeVersion, CriError>
    /** Resolves to the image id (image_ref) the runtime reports. */
    readonly pullImage: (request: PullRequest) => Effect.Effect<string, CriError>
    /** None when the node does not have the image. */
    readonly imageStatus: (image: string) => Effect.Effect<Option.Option<ImageInfo>, CriError>
    readonly listImages: Effect.Effect<ReadonlyArray<ImageInfo>, CriError>
    readonly removeImage: (image: string) => Effect.Effect<void, CriError>
    /** ImageFsInfo: the filesystems that hold the runtime's images (usually one). */
    readonly imageFsInfo: Effect.Effect<ReadonlyArray<ImageFsUsage>, CriError>
  }
>()("preheat/cri/CriRuntime") {}
