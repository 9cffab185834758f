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
 * `preheat` with every command: the product's, and the harness's (`apiserver`, `dev`, `fleet`:
 * harness/commands.ts), which main.ts loads and passes in, since the product imports nothing of the
 * harness. They are listed apart in the help.
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
