import { Command } from "effect/cli"
import { apiserverCommand } from "./apiserverCommand.ts"
import { controllerCommand } from "./controllerCommand.ts"
import { crdsCommand } from "./crdsCommand.ts"
import { daemonCommand } from "./daemonCommand.ts"
import { devCommand } from "./devCommand.ts"
import { fleetCommand } from "./fleetCommand.ts"
import { description } from "./preheatDescription.ts"
import { rolloutCommand } from "./rolloutCommand.ts"
import { statusCommand } from "./statusCommand.ts"
import { versionCommand } from "./versionCommand.ts"

/** `preheat` with every command. */
export const preheatCommand = Command.make("preheat").pipe(
  Command.withDescription(description),
  Command.withSubcommands([
    apiserverCommand,
    controllerCommand,
    crdsCommand,
    daemonCommand,
    devCommand,
    fleetCommand,
    rolloutCommand,
    statusCommand,
    versionCommand
  ])
)
