import { Context, Data } from "effect"
import type { Effect } from "effect"

/** A filesystem's size and the room left on it, as statfs gives them (what the kubelet reads for its image GC). */
export interface FilesystemSize {
  readonly totalBytes: number
  /** Free for an unprivileged writer (statfs f_bavail), as the kubelet counts "available". */
  readonly freeBytes: number
}

/** statfs of a path failed: not visible here (no mount of it in the container), or not a path at all. */
export class FilesystemStatsFailed extends Data.TaggedError("FilesystemStatsFailed")<{
  readonly path: string
  readonly message: string
}> {}

/**
 * The size of the node's filesystem that holds a path: for the image filesystem's mountpoint CRI's
 * ImageFsInfo reports. Live body: statfs under the host's root as mounted in the container
 * (layers/cri/live/filesystemStats.ts); simulated: the simulated node's disk.
 */
export class FilesystemStats extends Context.Service<
  FilesystemStats,
  {
    /** The filesystem that holds `path`, a path on the node (the mountpoint as the runtime names it). */
    readonly statfs: (path: string) => Effect.Effect<FilesystemSize, FilesystemStatsFailed>
  }
>()("preheat/cri/FilesystemStats") {}
