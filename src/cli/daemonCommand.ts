import { Duration, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import {
  credentialProviderBinDirFlag,
  credentialProviderConfigFlag,
  integer,
  MissingBinDir,
  minFreeDiskFlag,
  pullProgressTimeoutFlag,
  text
} from "./flags.ts"
import { credentialProvidersLayer } from "../../layers/cri/live/credentialProviderPlugins.ts"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { daemonRateLimit, KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { runDaemon } from "../daemon/daemon.ts"
import { daemonOptions, defaultDaemonOptions, defaultKubeletConfig } from "../daemon/options.ts"
import { logFormatFlag, loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { version } from "../version.ts"

/** Missing NODE_NAME is a usage error of the DaemonSet: said in one line, not a stack trace. */
class MissingNodeName extends Error {
  override readonly message = "no node name: set --node-name or NODE_NAME (the DaemonSet sets it from spec.nodeName)"
}

export const daemonCommand = Command.make(
  "daemon",
  {
    nodeName: text("node-name", "The node this daemon pulls for; default: $NODE_NAME.").pipe(Flag.optional),
    kubeconfig: text("kubeconfig", "Kubeconfig file; default: $KUBECONFIG, the in-cluster service account, ~/.kube/config.").pipe(
      Flag.optional
    ),
    context: text("context", "Kubeconfig context to use instead of its current-context.").pipe(Flag.optional),
    runtimeSocket: text(
      "runtime-socket",
      "CRI socket (path or unix:// URL); default: the first that answers of containerd, crio and " + "cri-dockerd under --host-run-dir."
    ).pipe(Flag.optional),
    simulatedRuntime: Flag.Boolean("simulated-runtime").pipe(
      Flag.withDescription(
        "Pull on a simulated runtime (every image exists, ~50 MB/s) instead of the node's CRI runtime: " + "for tests and local clusters."
      ),
      Flag.withDefault(false)
    ),
    hostRunDir: text("host-run-dir", "Where to look for the runtime socket.").pipe(Flag.withDefault("/var/run")),
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
    pinImages: Flag.Boolean("pin-images").pipe(
      Flag.withDescription(
        "Keep the images Never jobs want here out of the kubelet's image GC (containerd's io.cri-containerd.pinned " +
          "label) while a tag wants them. Off, the pins of an earlier run are removed at start."
      ),
      Flag.withDefault(false)
    ),
    metricsHost: text("metrics-host", "Address of /healthz, /readyz and /metrics.").pipe(
      Flag.withDefault(defaultDaemonOptions.metricsHost)
    ),
    metricsPort: integer("metrics-port", "Port of /healthz, /readyz and /metrics", defaultDaemonOptions.metricsPort),
    qps: integer("kube-api-qps", "Requests per second to the API server", daemonRateLimit.qps),
    burst: integer("kube-api-burst", "Requests allowed in a burst", daemonRateLimit.burst),
    logFormat: logFormatFlag
  },
  (flags) =>
    Effect.gen(function* () {
      const nodeName = Option.getOrUndefined(flags.nodeName) ?? process.env["NODE_NAME"]
      if (nodeName === undefined || nodeName === "") return yield* Effect.fail(new MissingNodeName())
      const providerConfig = Option.getOrUndefined(flags.credentialProviderConfig)
      const providerBinDir = Option.getOrUndefined(flags.credentialProviderBinDir)
      if (providerConfig !== undefined && providerBinDir === undefined) return yield* Effect.fail(new MissingBinDir())
      // Without the config the daemon has no credential providers: pull secrets only.
      const providers =
        providerConfig === undefined || providerBinDir === undefined
          ? Layer.empty
          : credentialProvidersLayer({ configPath: providerConfig, binDir: providerBinDir })
      const kube = KubeLive.layerWithAccess({
        kubeconfig: Option.getOrUndefined(flags.kubeconfig),
        context: Option.getOrUndefined(flags.context),
        qps: flags.qps,
        burst: flags.burst,
        userAgent: `preheat-daemon/${version} (${nodeName})`
      })
      // The live runtime: the socket given, else the first of SPEC §3's that answers; none answering
      // fails the start, and the kubelet restarts the pod.
      // The simulated one is loaded only when asked for: a node's daemon evaluates none of it.
      const runtime = flags.simulatedRuntime
        ? Layer.unwrap(Effect.promise(() => import("../../layers/cri/simulated/simulatedNode.ts").then((m) => m.simulatedNodeLayer())))
        : CriLive.layer({
            socket: Option.getOrUndefined(flags.runtimeSocket),
            hostRunDir: flags.hostRunDir,
            hostRoot: flags.hostRoot
          })
      return yield* runDaemon(
        daemonOptions({
          nodeName,
          secretNamespace: flags.secretNamespace,
          maxConcurrentPulls: flags.maxConcurrentPulls,
          minFreeDisk: flags.minFreeDisk,
          pullProgressTimeout: Duration.millis(flags.pullProgressTimeout),
          pinImages: flags.pinImages,
          metricsHost: flags.metricsHost,
          metricsPort: flags.metricsPort,
          ...(flags.kubeletConfig === ""
            ? {}
            : {
                kubeletConfig: {
                  file: flags.kubeletConfig,
                  dir: Option.getOrUndefined(flags.kubeletConfigDir),
                  hostRoot: flags.hostRoot
                }
              })
        })
      ).pipe(
        // The providers' config is read first: a bad one stops the daemon before any other start-up work.
        Effect.provide(
          Layer.mergeAll(kube, runtime, SchedulerLive.layer()).pipe(Layer.provideMerge(Layer.provideMerge(providers, Metrics.layer)))
        ),
        Effect.provide(loggingLayer({ format: flags.logFormat }))
      )
    })
).pipe(
  Command.withDescription(
    "Run the daemon on one node: watch its NodeImage, pull each tag through the node's CRI runtime, " + "report status and progress."
  )
)
