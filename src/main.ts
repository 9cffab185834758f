#!/usr/bin/env node
import { Effect } from "effect"
import { roleOnlyCommand } from "./cli/roleOnlyCommand.ts"
import { runPreheat } from "./cli/runPreheat.ts"

/**
 * `preheat controller` and `preheat daemon` (the roles, one on every node) load only their own
 * command's modules; everything else (and `preheat --log-level debug daemon`, whose first argument
 * is a flag) gets every command, the harness's too: harness/commands.ts is the one module of
 * harness/ the product names, and only here, through `import()`. The bundles keep all of it in one
 * file; esbuild evaluates a module only once an `import()` asks for it. The single executable
 * goes further for the daemon (daemonMain.ts).
 */
runPreheat(
  Effect.promise(async () => {
    switch (process.argv[2]) {
      case "controller":
        return roleOnlyCommand((await import("./cli/controllerCommand.ts")).controllerCommand)
      case "daemon":
        return roleOnlyCommand((await import("./cli/daemonCommand.ts")).daemonCommand)
      default: {
        const [{ preheatCommand }, { harnessCommands }] = await Promise.all([
          import("./cli/preheatCommand.ts"),
          import("../harness/commands.ts")
        ])
        return preheatCommand(harnessCommands)
      }
    }
  })
)
