import type { DaemonFlags } from "../../src/cli/daemonFlags.ts"
import { runDaemonCommand } from "../../src/cli/runDaemonCommand.ts"
import { simulatedNodeLayer } from "../layers/simulatedRuntime/simulatedNode.ts"

/** `preheat simulated-daemon`: the daemon of one node as `preheat daemon` runs it, on a simulated node's runtime. */
export const runSimulatedDaemon = (flags: DaemonFlags) => runDaemonCommand(flags, simulatedNodeLayer())
