import { apiserverCommand } from "./cli/apiserverCommand.ts"
import { devCommand } from "./cli/devCommand.ts"
import { fleetCommand } from "./cli/fleetCommand.ts"
import { simulatedDaemonCommand } from "./cli/simulatedDaemonCommand.ts"

/**
 * `preheat apiserver`, `dev`, `fleet` and `simulated-daemon`, for the tree of every command
 * (main.ts). These are the commands' flags and help only: each loads what it runs when it runs, so
 * `preheat dev --help` evaluates none of the API server.
 */
export const harnessCommands = [apiserverCommand, devCommand, fleetCommand, simulatedDaemonCommand] as const
