#!/usr/bin/env node
import { Effect } from "effect"
import { preheatCommand } from "../src/cli/preheatCommand.ts"
import { runPreheat } from "../src/cli/runPreheat.ts"
import { harnessCommands } from "./commands.ts"

/**
 * preheat with every command, the harness's (`apiserver`, `dev`, `fleet`, `simulated-daemon`) too:
 * the entry of the harness's bundle. src/main.ts hands over to it with `import()` when the command
 * line is not plainly the product's (src/cli/treeFor.ts), the single executable's main script
 * picks it by the same rule; run directly it takes any command line.
 */
runPreheat(Effect.succeed(preheatCommand(harnessCommands)))
