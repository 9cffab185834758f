import type { Command } from "effect/cli"
import { Flag } from "effect/cli"
import {
  credentialProviderBinDirFlag,
  credentialProviderConfigFlag,
  integer,
  kubeconfigFlags,
  minFreeDiskFlag,
  nodeStatusMaxImagesFlag,
  port,
  pullProgressTimeoutFlag,
  text,
  unreportedGraceFlag
} from "./flags.ts"
import { daemonRateLimit } from "../../layers/kube/live/rateLimiter.ts"
import { defaultDaemonOptions, defaultKubeletConfig } from "../daemon/options.ts"
import { logFormatFlag } from "../ops/logging.ts"

/** Which node, and which API server: the first flags of the help. */
const nodeFlags = {
  nodeName: text("node-name", "The node this daemon pulls for; default: $NODE_NAME.").pipe(Flag.optional),
  ...kubeconfigFlags
}

/** How the daemon pulls, where it reads the node's files, how it reports. */
const settingFlags = {
  hostRoot: text(
    "host-root",
    "Where the node's filesystem is mounted in this container: the image filesystem's mountpoint the runtime reports " +
      "is sized (statfs) under it. Default / (running on the node)."
  ).pipe(Flag.withDefault("/")),
  kubeletConfig: text(
    "kubelet-config",
    "The kubelet's configuration file (its --config), as a path on the node read under --host-root: the node's " +
      "imagePullCredentialsVerificationPolicy is read from it (KEP-2535; NodeImage status, metric). Missing: the policy is " +
      `unknown. "" does not read it (default ${defaultKubeletConfig}).`
  ).pipe(Flag.withDefault(defaultKubeletConfig)),
  kubeletConfigDir: text(
    "kubelet-config-dir",
    "The kubelet's --config-dir, if it has one: its .conf drop-in files are merged over --kubelet-config as the kubelet merges them."
  ).pipe(Flag.optional),
  secretNamespace: text("secret-namespace", "The namespace of the pull-secret copies (the only Secrets read).").pipe(
    Flag.withDefault(defaultDaemonOptions.secretNamespace)
  ),
  maxConcurrentPulls: integer(
    "max-concurrent-pulls",
    "Pulls at once on this node; further tags wait",
    defaultDaemonOptions.maxConcurrentPulls
  ),
  minFreeDisk: minFreeDiskFlag,
  pullProgressTimeout: pullProgressTimeoutFlag,
  credentialProviderConfig: credentialProviderConfigFlag,
  credentialProviderBinDir: credentialProviderBinDirFlag,
  nodeStatusMaxImages: nodeStatusMaxImagesFlag,
  unreportedGrace: unreportedGraceFlag,
  pinImages: Flag.Boolean("pin-images").pipe(
    Flag.withDescription(
      "Keep the images Never jobs want here out of the kubelet's image GC (containerd's io.cri-containerd.pinned " +
        "label) while a tag wants them. Off, the pins of an earlier run are removed at start."
    ),
    Flag.withDefault(false)
  ),
  metricsHost: text("metrics-host", "Address of /healthz, /readyz and /metrics.").pipe(Flag.withDefault(defaultDaemonOptions.metricsHost)),
  metricsPort: port("metrics-port", "Port of /healthz, /readyz and /metrics", defaultDaemonOptions.metricsPort),
  qps: integer("kube-api-qps", "Requests per second to the API server", daemonRateLimit.qps),
  burst: integer("kube-api-burst", "Requests allowed in a burst", daemonRateLimit.burst),
  logFormat: logFormatFlag
}

/**
 * The daemon's flags, with `runtime`'s (those that choose its runtime) after the node's: the one
 * definition behind `preheat daemon` (the node's CRI runtime) and the harness's `preheat
 * simulated-daemon` (a simulated one), so the two take the same command line but for the runtime.
 */
export const daemonFlags = <const Runtime extends Command.Command.Config>(runtime: Runtime) =>
  ({ ...nodeFlags, ...runtime, ...settingFlags }) as const

/** The values of the daemon's flags but the runtime's (runDaemonCommand.ts runs them). */
export type DaemonFlags = Command.Command.Config.Infer<typeof nodeFlags & typeof settingFlags>
