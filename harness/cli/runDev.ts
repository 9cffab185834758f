import { Duration, Effect, Layer, Option } from "effect"
import { credentialProvidersLayer } from "../../layers/cri/live/credentialProviderPlugins.ts"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { MissingBinDir } from "../../src/cli/flags.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import type { HealthReport } from "../../src/ops/server.ts"
import { serveOps } from "../../src/ops/server.ts"
import { announce, startDevCluster } from "../cluster/devCluster.ts"
import type { DevFlags } from "./devCommand.ts"

/**
 * Served only once the cluster started, so the process answering is the whole check: a `ping` as
 * kube-apiserver's /healthz has. The controller and the daemons inside have no probes of their own here.
 */
const serving = Effect.succeed<HealthReport>([{ name: "ping", ok: true }])

/** Dev's /healthz, /readyz and /metrics on --host and --metrics-port: its URL, or none without the flag. */
const serveMetrics = (host: string, port: number | undefined) =>
  port === undefined
    ? Effect.succeed(undefined)
    : Effect.map(serveOps({ host, port, health: serving, ready: serving }), (bound) => {
        const shown = host.includes(":") ? `[${host}]` : host
        return `http://${shown}:${bound.port}/metrics`
      })

/** `preheat dev`: the embedded API server, the controller and simulated nodes, until interrupted. */
export const runDev = (flags: DevFlags) =>
  Effect.gen(function* () {
    const metricsPort = Option.getOrUndefined(flags.metricsPort)
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
    const metricsUrl = yield* serveMetrics(flags.host, metricsPort)
    yield* announce(cluster, flags.nodes, { p2p: flags.p2p, metricsUrl })
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    // One registry for the controller, every daemon and the simulated registry; the process's own
    // metrics (event-loop and GC observers) only when something scrapes them.
    Effect.provide(Option.isSome(flags.metricsPort) ? Metrics.layer : Metrics.layerTest),
    Effect.provide(SchedulerLive.layer()),
    // One line per message, warnings and errors only: the terminal is for kubectl's output.
    Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
  )
