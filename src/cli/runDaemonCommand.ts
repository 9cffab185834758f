import { Duration, Effect, Layer, Option } from "effect"
import type { DaemonFlags } from "./daemonFlags.ts"
import { kubeconfigSource, MissingBinDir } from "./flags.ts"
import { credentialProvidersLayer } from "../../layers/cri/live/credentialProviderPlugins.ts"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import type { CriRuntime } from "../cri/CriRuntime.ts"
import type { FilesystemStats } from "../cri/FilesystemStats.ts"
import type { ImageLabels } from "../cri/ImageLabels.ts"
import { runDaemon } from "../daemon/daemon.ts"
import { daemonOptions } from "../daemon/options.ts"
import { loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { version } from "../version.ts"

/** Missing NODE_NAME is a usage error of the DaemonSet: said in one line, not a stack trace. */
class MissingNodeName extends Error {
  override readonly message = "no node name: set --node-name or NODE_NAME (the DaemonSet sets it from spec.nodeName)"
}

/**
 * The daemon of one node as its flags (daemonFlags.ts) say, pulling through `runtime`: the node's
 * CRI runtime for `preheat daemon`, a simulated one for the harness's `preheat simulated-daemon`.
 */
export const runDaemonCommand = <E>(flags: DaemonFlags, runtime: Layer.Layer<CriRuntime | ImageLabels | FilesystemStats, E>) =>
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
      ...kubeconfigSource(flags),
      qps: flags.qps,
      burst: flags.burst,
      userAgent: `preheat-daemon/${version} (${nodeName})`
    })
    return yield* runDaemon(
      daemonOptions({
        nodeName,
        secretNamespace: flags.secretNamespace,
        maxConcurrentPulls: flags.maxConcurrentPulls,
        minFreeDisk: flags.minFreeDisk,
        pullProgressTimeout: Duration.millis(flags.pullProgressTimeout),
        pinImages: flags.pinImages,
        nodeStatusMaxImages: flags.nodeStatusMaxImages,
        unreportedGrace: Duration.millis(flags.unreportedGrace),
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
