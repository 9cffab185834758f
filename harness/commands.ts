import { apiserverCommand } from "./cli/apiserverCommand.ts"
import { devCommand } from "./cli/devCommand.ts"
import { fleetCommand } from "./cli/fleetCommand.ts"

/**
 * The harness's entry: `preheat apiserver`, `dev` and `fleet` as commands of the one executable.
 * src/main.ts imports this module (with `import()`, and only when the command is not a role) and
 * nothing else of harness/. These are the commands' flags and help only: each loads what it runs
 * when it runs, so `preheat --help` evaluates none of the API server.
 */
export const harnessCommands = [apiserverCommand, devCommand, fleetCommand] as const
