import { statfs } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { FilesystemStats, FilesystemStatsFailed } from "../../../src/cri/FilesystemStats.ts"

/**
 * statfs of node paths as this process sees them under `hostRoot`: `/` when the daemon runs on the
 * node itself, `/host` in the DaemonSet, which mounts the runtime's image store read-only there
 * (deploy/daemon.yaml). A path with no such mount fails (ENOENT): never the figures of whatever
 * filesystem the container has at its parent, which would be another disk.
 */
export const filesystemStatsAt = (hostRoot: string): FilesystemStats["Service"] =>
  FilesystemStats.of({
    statfs: Effect.fn("FilesystemStats.statfs")(function* (path: string) {
      const local = join(hostRoot, path)
      const stats = yield* Effect.tryPromise({
        try: () => statfs(local),
        catch: (error) => new FilesystemStatsFailed({ path: local, message: error instanceof Error ? error.message : String(error) })
      })
      return { totalBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize }
    })
  })
