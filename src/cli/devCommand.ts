import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as CriLive from "../../layers/criLive.ts"
import { WorkQueuesLive } from "../../layers/workQueues.ts"
import { announce, startDevCluster } from "../dev/devCluster.ts"
import { loggingLayer } from "../ops/logging.ts"

export const devCommand = Command.make(
  "dev",
  {
    nodes: Flag.Int("nodes").pipe(Flag.withDescription("Simulated nodes (default 3)."), Flag.withDefault(3)),
    host: Flag.String("host").pipe(Flag.withDescription("Address of the API server (default 127.0.0.1)."), Flag.withDefault("127.0.0.1")),
    port: Flag.Int("port").pipe(Flag.withDescription("Port of the API server; 0 picks a free one (default 0)."), Flag.withDefault(0)),
    kubeconfigOut: Flag.String("kubeconfig").pipe(
      Flag.withDescription("Where to write the kubeconfig for kubectl (default: preheat-dev.kubeconfig in the temp dir)."),
      Flag.withDefault(join(tmpdir(), "preheat-dev.kubeconfig"))
    ),
    runtimeSocket: Flag.String("runtime-socket").pipe(
      Flag.withDescription("A real CRI socket: node-1 then pulls for real; the other nodes stay simulated."),
      Flag.optional
    )
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.nodes < 1) return yield* Effect.fail(new Error("--nodes must be at least 1"))
      const runtimeSocket = Option.getOrUndefined(flags.runtimeSocket)
      const cluster = yield* startDevCluster({
        nodes: flags.nodes,
        host: flags.host,
        port: flags.port,
        kubeconfigOut: flags.kubeconfigOut,
        node1Runtime: runtimeSocket === undefined ? undefined : CriLive.layer({ socket: runtimeSocket })
      })
      yield* announce(cluster, flags.nodes)
      return yield* Effect.never
    }).pipe(
      Effect.scoped,
      Effect.provide(WorkQueuesLive.layer()),
      // One line per message, warnings and errors only: the terminal is for kubectl's output.
      Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
    )
).pipe(
  Command.withDescription(
    "Run a local cluster in one process: an API server, the controller and simulated nodes with daemons; " +
      "kubectl works against it at once."
  )
)
