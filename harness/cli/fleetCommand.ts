import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { daemonRateLimit } from "../../layers/kube/live/rateLimiter.ts"
import { bytesFlag, integer, kubeconfigFlags, minFreeDiskFlag, port, text } from "../../src/cli/flags.ts"
import { defaultDaemonOptions } from "../../src/daemon/options.ts"
import { logFormatFlag } from "../../src/ops/logging.ts"
import { harnessDescriptions } from "../../src/cli/harnessListing.ts"

const flags = {
  nodes: Flag.Int("nodes").pipe(Flag.withDescription("Simulated nodes, node-1..node-N (default 3)."), Flag.withDefault(3)),
  ...kubeconfigFlags,
  secretNamespace: text("secret-namespace", "The namespace of the pull-secret copies (the only Secrets read).").pipe(
    Flag.withDefault(defaultDaemonOptions.secretNamespace)
  ),
  maxConcurrentPulls: integer(
    "max-concurrent-pulls",
    "Pulls at once on each node; further tags wait",
    defaultDaemonOptions.maxConcurrentPulls
  ),
  minFreeDisk: minFreeDiskFlag,
  nodeDisk: bytesFlag(
    "node-disk",
    "Size of each simulated node's image disk, which pulled images fill (simulated nodes have no image GC)",
    "1Ti"
  ),
  metricsHost: text("metrics-host", "Address of /healthz, /readyz and /metrics.").pipe(Flag.withDefault("127.0.0.1")),
  metricsPort: port("metrics-port", "Port of /healthz, /readyz and /metrics; 0 picks a free one", 0),
  qps: integer("kube-api-qps", "Requests per second to the API server, per node", daemonRateLimit.qps),
  burst: integer("kube-api-burst", "Requests allowed in a burst, per node", daemonRateLimit.burst),
  logFormat: logFormatFlag
}

export type FleetFlags = Command.Command.Config.Infer<typeof flags>

/** `preheat fleet`'s flags and help; the simulated nodes (runFleet.ts) are loaded when it runs. */
export const fleetCommand = Command.make("fleet", flags, (input) =>
  Effect.flatMap(
    Effect.promise(() => import("./runFleet.ts")),
    ({ runFleet }) => runFleet(input)
  )
).pipe(Command.withDescription(harnessDescriptions.fleet))
