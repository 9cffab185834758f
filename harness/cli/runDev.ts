import { Duration, Effect, Layer, Option } from "effect"
import { credentialProvidersLayer } from "../../layers/cri/live/credentialProviderPlugins.ts"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { MissingBinDir } from "../../src/cli/flags.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { announce, startDevCluster } from "../cluster/devCluster.ts"
import type { DevFlags } from "./devCommand.ts"

/** `preheat dev`: the embedded API server, the controller and simulated nodes, until interrupted. */
export const runDev = (flags: DevFlags) =>
  Effect.gen(function* () {
    if (flags.nodes < 1) return yield* Effect.fail(new Error("--nodes must be at least 1"))
    const runtimeSocket = Option.getOrUndefined(flags.runtimeSocket)
    const providerConfig = Option.getOrUndefined(flags.credentialProviderConfig)
    const providerBinDir = Option.getOrUndefined(flags.credentialProviderBinDir)
    if (providerConfig !== undefined && providerBinDir === undefined) return yield* Effect.fail(new MissingBinDir())
    const credentialProviders =
      providerConfig === undefined || providerBinDir === undefined
        ? undefined
        : credentialProvidersLayer({ configPath: providerConfig, binDir: providerBinDir })
    // A config the kubelet would refuse stops `dev` at once, as it stops a daemon, not each node's join.
    if (credentialProviders !== undefined) yield* Effect.scoped(Layer.build(credentialProviders.pipe(Layer.provide(Metrics.layerTest))))
    const cluster = yield* startDevCluster({
      nodes: flags.nodes,
      host: flags.host,
      port: flags.port,
      kubeconfigOut: flags.kubeconfigOut,
      p2p: flags.p2p,
      eraserExclusionNamespace: Option.getOrUndefined(flags.eraserExclusionNamespace),
      node1Runtime: runtimeSocket === undefined ? undefined : CriLive.layer({ socket: runtimeSocket }),
      node: {
        minFreeDisk: flags.minFreeDisk,
        pullProgressTimeout: Duration.millis(flags.pullProgressTimeout),
        disk: { capacity: flags.nodeDisk },
        nodeStatusMaxImages: flags.nodeStatusMaxImages,
        ...(credentialProviders === undefined ? {} : { credentialProviders })
      }
    })
    yield* announce(cluster, flags.nodes, flags.p2p)
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(SchedulerLive.layer()),
    // One line per message, warnings and errors only: the terminal is for kubectl's output.
    Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
  )
