import { join } from "node:path"
import { Effect, type FileSystem, Result } from "effect"
import type { PlatformError } from "effect/PlatformError"
import type { KubeletImageVerification } from "../../api/kubeletImageVerification.ts"
import { type ConfigFile, verificationOf } from "./decode.ts"

/** Where the kubelet's configuration is, as paths on the node, and where the node's filesystem is seen from. */
export interface KubeletConfigPaths {
  /** `--kubelet-config`: the kubelet's `--config` file. */
  readonly file: string
  /** `--kubelet-config-dir`: the kubelet's `--config-dir` (drop-in files), if it has one. */
  readonly dir?: string | undefined
  /** `--host-root`: the node's `/` in this container. */
  readonly hostRoot: string
}

/** The system's reason without the path under --host-root (messages name paths on the node). */
const why = (error: PlatformError): string => {
  const reason = error.reason
  if (reason._tag === "BadArgument") return reason.message
  return reason.description === undefined ? reason._tag : `${reason._tag}: ${reason.description}`
}

/** The `.conf` files under `dir`, in the order Go's filepath.WalkDir visits them (lexical, depth first), as the kubelet loads them. */
const dropInFiles = (fs: FileSystem.FileSystem, hostRoot: string, dir: string): Effect.Effect<Array<string>, PlatformError> =>
  Effect.gen(function* () {
    const found: Array<string> = []
    const entries = [...(yield* fs.readDirectoryEntries(join(hostRoot, dir)))].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    )
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (entry.type === "Directory") found.push(...(yield* dropInFiles(fs, hostRoot, path)))
      else if (entry.name.endsWith(".conf")) found.push(path)
    }
    return found
  })

const readConfigFile = (fs: FileSystem.FileSystem, hostRoot: string, path: string) =>
  Effect.map(fs.readFileString(join(hostRoot, path)), (text): ConfigFile => ({ path, text }))

export interface KubeletConfigReading {
  readonly verification: KubeletImageVerification
  /** False when there is no file at the path: not mounted, or elsewhere on this node (not a fault of the file). */
  readonly found: boolean
}

/**
 * The node's verification policy from its kubelet configuration: Unknown, with the reason, when
 * the file is not there or cannot be read, or the kubelet would refuse it; never fails.
 */
export const readKubeletVerification = (fs: FileSystem.FileSystem, paths: KubeletConfigPaths): Effect.Effect<KubeletConfigReading> =>
  Effect.gen(function* () {
    const main = yield* Effect.result(readConfigFile(fs, paths.hostRoot, paths.file))
    if (Result.isFailure(main)) {
      const missing = main.failure.reason._tag === "NotFound"
      const message = missing
        ? `no kubelet configuration at ${paths.file}: mount the kubelet's --config file there (read-only) or name it with --kubelet-config`
        : `${paths.file} could not be read: ${why(main.failure)}`
      return { verification: { policy: "Unknown", source: paths.file, message }, found: !missing }
    }
    // The kubelet refuses an empty --config file, so an empty file is not its configuration: the
    // DaemonSet's FileOrCreate mount leaves one on nodes whose kubelet reads another path.
    if (main.success.text.trim() === "") {
      const message = `no kubelet configuration at ${paths.file} (an empty file): name the kubelet's --config file with --kubelet-config`
      return { verification: { policy: "Unknown", source: paths.file, message }, found: false }
    }
    if (paths.dir === undefined) return { verification: verificationOf(main.success), found: true }
    const dir = paths.dir
    const dropIns = yield* Effect.result(
      Effect.flatMap(dropInFiles(fs, paths.hostRoot, dir), (files) => Effect.forEach(files, (f) => readConfigFile(fs, paths.hostRoot, f)))
    )
    if (Result.isFailure(dropIns)) {
      const message = `the drop-in files in ${dir} could not be read: ${why(dropIns.failure)}`
      return { verification: { policy: "Unknown", source: dir, message }, found: true }
    }
    return { verification: verificationOf(main.success, dropIns.success), found: true }
  })
