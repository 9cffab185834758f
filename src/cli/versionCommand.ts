import { Console } from "effect"
import { Command } from "effect/cli"
import { version } from "../version.ts"

export const versionCommand = Command.make("version", {}, () => Console.log(`preheat ${version}`)).pipe(
  Command.withDescription("Print the version of preheat.")
)
