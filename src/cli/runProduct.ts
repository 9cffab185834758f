import { Effect } from "effect"
import { roleOnlyCommand } from "./roleOnlyCommand.ts"
import { runPreheat } from "./runPreheat.ts"
import type { Tree } from "./treeFor.ts"

/**
 * Runs the product's tree a command line needs (treeFor.ts): one role's command alone, so
 * `preheat controller` and `preheat daemon` evaluate none of the other commands' modules, or the
 * product's commands with the harness's listed by name (harnessListing.ts).
 */
export const runProduct = (tree: Exclude<Tree, "harness">): void =>
  runPreheat(
    Effect.promise(async () => {
      switch (tree) {
        case "controller":
          return roleOnlyCommand((await import("./controllerCommand.ts")).controllerCommand)
        case "daemon":
          return roleOnlyCommand((await import("./daemonCommand.ts")).daemonCommand)
        case "product": {
          const [{ preheatCommand }, { harnessListing }] = await Promise.all([import("./preheatCommand.ts"), import("./harnessListing.ts")])
          return preheatCommand(harnessListing)
        }
      }
    })
  )
