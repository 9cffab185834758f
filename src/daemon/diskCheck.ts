import { Duration, Effect, Result } from "effect"
import { CriRuntime } from "../cri/CriRuntime.ts"
import { FilesystemStats } from "../cri/FilesystemStats.ts"
import { Metrics } from "../ops/metrics.ts"
import { diskVerdict, type ImageFsRoom, type InsufficientDisk, type MinFreeDisk } from "./minFreeDisk.ts"

/** The room on the runtime's image filesystem, asked before each pull attempt. */
export interface DiskCheck {
  /**
   * InsufficientDisk when an image filesystem has less free room than `--min-free-disk`; undefined
   * when there is room, and also when the room cannot be told (said once in the log and by the
   * `preheat_image_fs_unknown` metric): a missing figure never stops a pull.
   */
  readonly check: Effect.Effect<InsufficientDisk | undefined>
}

export interface DiskCheckOptions {
  /** How long the runtime's answer naming its image filesystems is used before it is asked again. */
  readonly mountpointsMaxAge: Duration.Input
}

/**
 * 5 s. The mountpoint is where the runtime keeps its images, fixed while it runs; asking again
 * every few seconds follows a runtime restarted with another store. containerd 1.6 answers
 * ImageFsInfo from a snapshot of its own (its usage figures, which the check does not use, are
 * collected every `stats_collect_period`, 10 s by default).
 */
const defaultDiskCheckOptions: DiskCheckOptions = { mountpointsMaxAge: Duration.seconds(5) }

/** The mountpoints of the runtime's image filesystems (CRI ImageFsInfo), or why there are none. */
const readMountpoints: Effect.Effect<Result.Result<ReadonlyArray<string>, string>, never, CriRuntime> = Effect.gen(function* () {
  const usages = yield* Effect.result((yield* CriRuntime).imageFsInfo)
  if (Result.isFailure(usages)) return Result.fail(`the runtime did not answer ImageFsInfo (${usages.failure._tag})`)
  const mountpoints = usages.success.map((usage) => usage.mountpoint).filter((mountpoint) => mountpoint !== "")
  if (mountpoints.length === 0) return Result.fail("the runtime's ImageFsInfo names no image filesystem mountpoint")
  return Result.succeed(mountpoints)
})

/** Each image filesystem sized by statfs of its mountpoint as the kubelet does, since CRI gives no capacity; or why not. */
const sizeRooms = (
  mountpoints: ReadonlyArray<string>
): Effect.Effect<Result.Result<ReadonlyArray<ImageFsRoom>, string>, never, FilesystemStats> =>
  Effect.gen(function* () {
    const filesystems = yield* FilesystemStats
    const rooms: Array<ImageFsRoom> = []
    for (const mountpoint of mountpoints) {
      const size = yield* Effect.result(filesystems.statfs(mountpoint))
      if (Result.isFailure(size)) {
        return Result.fail(
          `statfs of the image filesystem ${mountpoint} failed (${size.failure.message}); ` +
            "in a container, mount the runtime's image store read-only under --host-root"
        )
      }
      if (size.success.totalBytes <= 0) return Result.fail(`statfs of the image filesystem ${mountpoint} gives no size`)
      rooms.push({ mountpoint, ...size.success })
    }
    return Result.succeed(rooms)
  })

/**
 * Every check sizes the image filesystems with statfs, a system call of microseconds, so each
 * decision is made on the room as it is now. Which filesystems those are, CRI's ImageFsInfo (a
 * round trip to the runtime), is asked at most once per `mountpointsMaxAge`, and attempts starting
 * together share one call.
 */
export const makeDiskCheck = Effect.fnUntraced(function* (
  min: MinFreeDisk,
  options: DiskCheckOptions = defaultDiskCheckOptions
): Effect.fn.Return<DiskCheck, never, CriRuntime | FilesystemStats | Metrics> {
  const services = yield* Effect.context<CriRuntime | FilesystemStats>()
  const metrics = yield* Metrics
  const mountpoints = yield* Effect.cachedWithTTL(readMountpoints.pipe(Effect.provideContext(services)), options.mountpointsMaxAge)
  /** Why the room is unknown, as last logged: each reason is said once, not before every pull. */
  let unknownSaid: string | undefined

  const check = Effect.gen(function* () {
    const named = yield* mountpoints
    const rooms = Result.isFailure(named)
      ? Result.fail(named.failure)
      : yield* sizeRooms(named.success).pipe(Effect.provideContext(services))
    yield* metrics.setImageFs(Result.getOrElse(rooms, () => []))
    if (Result.isFailure(rooms)) {
      if (unknownSaid !== rooms.failure) {
        unknownSaid = rooms.failure
        yield* Effect.logWarning("cannot tell the free space of the image filesystem; pulls go on without --min-free-disk").pipe(
          Effect.annotateLogs({ reason: rooms.failure })
        )
      }
      return undefined
    }
    if (unknownSaid !== undefined) {
      unknownSaid = undefined
      yield* Effect.logInfo("the free space of the image filesystem is known again")
    }
    for (const room of rooms.success) {
      const short = diskVerdict(min, room)
      if (short !== undefined) return short
    }
    return undefined
  }).pipe(Effect.withSpan("DiskCheck.check"))

  return { check }
})
