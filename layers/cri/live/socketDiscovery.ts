import { statSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { type CriError, RuntimeUnavailable } from "../../../src/cri/errors.ts"

/** Where each runtime puts its CRI socket under the host's run dir, in the order we try them. */
const socketNames: ReadonlyArray<string> = [
  "containerd.sock",
  "containerd/containerd.sock",
  "crio.sock",
  "crio/crio.sock",
  "cri-dockerd.sock"
]

/** /var/run on a host; a DaemonSet mounts the host's /var/run at /host/var/run. */
const defaultHostRunDir = "/var/run"

export const candidateSockets = (hostRunDir: string): ReadonlyArray<string> => socketNames.map((name) => join(hostRunDir, name))

/** A gRPC target for a socket path (`unix:///abs/path`); a target already written as `unix:...` is kept. */
const socketTarget = (socket: string): string => (socket.startsWith("unix:") ? socket : `unix://${resolve(socket)}`)

export interface DiscoveryOptions {
  /** The `--runtime-socket` flag: used as given, without asking it anything. */
  readonly socket?: string | undefined
  readonly hostRunDir?: string | undefined
}

const isSocket = (path: string): Effect.Effect<boolean> => Effect.sync(() => statSync(path, { throwIfNoEntry: false })?.isSocket() === true)

/**
 * The socket to talk to: the given one, else the first candidate that answers `probe` (a Version
 * call). Fails with RuntimeUnavailable naming every path tried and why each was passed over.
 */
export const discoverSocket = (
  options: DiscoveryOptions,
  probe: (target: string) => Effect.Effect<unknown, CriError>
): Effect.Effect<string, RuntimeUnavailable> =>
  Effect.gen(function* () {
    if (options.socket !== undefined && options.socket !== "") return socketTarget(options.socket)
    const hostRunDir = options.hostRunDir ?? defaultHostRunDir
    const tried: Array<string> = []
    for (const path of candidateSockets(hostRunDir)) {
      if (!(yield* isSocket(path))) {
        tried.push(`${path} (no socket)`)
        continue
      }
      const target = socketTarget(path)
      const answer = yield* Effect.result(probe(target))
      if (answer._tag === "Success") return target
      tried.push(`${path} (${answer.failure._tag}: ${answer.failure.message})`)
    }
    return yield* new RuntimeUnavailable({
      message: `no container runtime answered; tried ${tried.join(", ")}. Set --runtime-socket to the runtime's CRI socket.`
    })
  })
