import { Effect, Layer } from "effect"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { kubeconfigSource } from "../../src/cli/flags.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { ApiAccess } from "../../src/kube/ApiAccess.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import type { HealthReport } from "../../src/ops/server.ts"
import { serveOps } from "../../src/ops/server.ts"
import { version } from "../../src/version.ts"
import { startFleet } from "../fleet/fleet.ts"
import type { FleetFlags } from "./fleetCommand.ts"

const nodesPerClient = 50

/** `preheat fleet`: N simulated nodes' daemons against the kubeconfig's API server, until interrupted. */
export const runFleet = (flags: FleetFlags) =>
  Effect.gen(function* () {
    if (flags.nodes < 1) return yield* Effect.fail(new Error("--nodes must be at least 1"))
    // A client per group of nodes, each with the group's summed budget: real daemons share no
    // client, and a group of 50 keeps each client's watches and connections near one busy
    // client's. Chosen when the client ran on undici, whose Pool scanned its connections on every
    // request (thousands of watches: a cost no real daemon has); not measured again since the
    // live client moved to node:http's Agent (issue 38).
    const client = (nodes: number) =>
      KubeLive.layerReporting({
        ...kubeconfigSource(flags),
        qps: flags.qps * nodes,
        burst: flags.burst * nodes,
        userAgent: `preheat-fleet/${version} (${nodes} nodes)`
      })
    const groups = Array.from({ length: Math.ceil(flags.nodes / nodesPerClient) }, (_, g) => ({
      first: g * nodesPerClient,
      count: Math.min(nodesPerClient, flags.nodes - g * nodesPerClient)
    }))
    return yield* Effect.gen(function* () {
      const daemons = (yield* Effect.forEach(groups, ({ count, first }) =>
        Effect.flatMap(Layer.build(client(count)), (kube) =>
          startFleet({
            first,
            count,
            maxConcurrentPulls: flags.maxConcurrentPulls,
            secretNamespace: flags.secretNamespace,
            minFreeDisk: flags.minFreeDisk,
            disk: { capacity: flags.nodeDisk }
          }).pipe(Effect.provideContext(kube))
        )
      )).flat()
      const access = yield* ApiAccess
      const ready = Effect.map(access.check, (check): HealthReport => {
        const synced = daemons.filter((d) => d.hasSynced()).length
        return [check, { name: "daemons-synced", ok: synced === daemons.length, message: `${synced}/${daemons.length}` }]
      })
      const { port } = yield* serveOps({ host: flags.metricsHost, port: flags.metricsPort, health: ready, ready })
      yield* Effect.logInfo("fleet started").pipe(Effect.annotateLogs({ nodes: flags.nodes, opsPort: port }))
      return yield* Effect.never
    }).pipe(
      Effect.scoped,
      // One ApiAccess for all the clients: one WARN per cause, not one per group of nodes.
      Effect.provide(Layer.mergeAll(SchedulerLive.layer(), ApiAccess.layer).pipe(Layer.provideMerge(Metrics.layer))),
      Effect.provide(loggingLayer({ format: flags.logFormat }))
    )
  })
