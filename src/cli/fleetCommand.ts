import { Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { integer, text } from "./flags.ts"
import { daemonRateLimit, KubeLive } from "../../layers/kubeLive.ts"
import { ApiAccess } from "../kube/ApiAccess.ts"
import { WorkQueuesLive } from "../../layers/workQueues.ts"
import { defaultDaemonOptions } from "../daemon/options.ts"
import { startFleet } from "../fleet/fleet.ts"
import { logFormatFlag, loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import type { HealthReport } from "../ops/server.ts"
import { serveOps } from "../ops/server.ts"
import { version } from "../version.ts"

const nodesPerClient = 50

export const fleetCommand = Command.make(
  "fleet",
  {
    nodes: Flag.Int("nodes").pipe(Flag.withDescription("Simulated nodes, node-1..node-N (default 3)."), Flag.withDefault(3)),
    kubeconfig: text("kubeconfig", "Kubeconfig file; default: $KUBECONFIG, the in-cluster service account, ~/.kube/config.").pipe(
      Flag.optional
    ),
    context: text("context", "Kubeconfig context to use instead of its current-context.").pipe(Flag.optional),
    secretNamespace: text("secret-namespace", "The namespace of the pull-secret copies (the only Secrets read).").pipe(
      Flag.withDefault(defaultDaemonOptions.secretNamespace)
    ),
    maxConcurrentPulls: integer(
      "max-concurrent-pulls",
      "Pulls at once on each node; further tags wait",
      defaultDaemonOptions.maxConcurrentPulls
    ),
    metricsHost: text("metrics-host", "Address of /healthz, /readyz and /metrics.").pipe(Flag.withDefault("127.0.0.1")),
    metricsPort: integer("metrics-port", "Port of /healthz, /readyz and /metrics; 0 picks a free one", 0),
    qps: integer("kube-api-qps", "Requests per second to the API server, per node", daemonRateLimit.qps),
    burst: integer("kube-api-burst", "Requests allowed in a burst, per node", daemonRateLimit.burst),
    logFormat: logFormatFlag
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.nodes < 1) return yield* Effect.fail(new Error("--nodes must be at least 1"))
      // A client per group of nodes, each with the group's summed budget: one connection pool
      // holding thousands of watches is scanned linearly on every request (undici's Pool), a cost
      // no real daemon has.
      const client = (nodes: number) =>
        KubeLive.layerReporting({
          kubeconfig: Option.getOrUndefined(flags.kubeconfig),
          context: Option.getOrUndefined(flags.context),
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
            startFleet({ first, count, maxConcurrentPulls: flags.maxConcurrentPulls, secretNamespace: flags.secretNamespace }).pipe(
              Effect.provideContext(kube)
            )
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
        Effect.provide(Layer.mergeAll(WorkQueuesLive.layer(), ApiAccess.layer).pipe(Layer.provideMerge(Metrics.layer))),
        Effect.provide(loggingLayer({ format: flags.logFormat }))
      )
    })
).pipe(
  Command.withDescription(
    "Run N simulated nodes in one process: each registered as a Ready Node and running the daemon on the simulated " +
      "runtime with its own NodeImage watch, for scale tests against a real API server and controller."
  )
)
