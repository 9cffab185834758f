import { Command } from "effect/cli"
import { allowlistCommand } from "./allowlistCommand.ts"
import { controllerCommand } from "./controllerCommand.ts"
import { crdsCommand } from "./crdsCommand.ts"
import { daemonCommand } from "./daemonCommand.ts"
import { description } from "./preheatDescription.ts"
import { rolloutCommand } from "./rolloutCommand.ts"
import { statusCommand } from "./statusCommand.ts"
import { versionCommand } from "./versionCommand.ts"

/**
 * `preheat` with the product's commands and the harness's (`apiserver`, `dev`, `fleet`,
 * `simulated-daemon`), listed apart in the help. The product imports nothing of the harness, so
 * the harness's are passed in: the commands themselves (harness/main.ts) or, in the product's
 * tree, their listing (harnessListing.ts), which help prints the same.
 */
export const preheatCommand = <const Harness extends ReadonlyArray<Command.Command.Any>>(harness: Harness) =>
  Command.make("preheat").pipe(
    Command.withDescription(description),
    Command.withSubcommands([
      allowlistCommand,
      controllerCommand,
      crdsCommand,
      daemonCommand,
      rolloutCommand,
      statusCommand,
      versionCommand,
      { group: "Local clusters and tests (the harness)", commands: harness }
    ])
  )
