import { Effect } from "effect"
import { Command } from "effect/cli"
import { daemonFlags } from "../../src/cli/daemonFlags.ts"
import { harnessDescriptions } from "../../src/cli/harnessListing.ts"

/**
 * `preheat simulated-daemon`: `preheat daemon`'s flags (the same definition) but for the runtime's,
 * since it pulls on a simulated one; the daemon and that runtime (runSimulatedDaemon.ts) are loaded
 * when it runs.
 */
export const simulatedDaemonCommand = Command.make("simulated-daemon", daemonFlags({}), (input) =>
  Effect.flatMap(
    Effect.promise(() => import("./runSimulatedDaemon.ts")),
    ({ runSimulatedDaemon }) => runSimulatedDaemon(input)
  )
).pipe(Command.withDescription(harnessDescriptions["simulated-daemon"]))
