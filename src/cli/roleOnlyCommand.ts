import { Command } from "effect/cli"
import { description } from "./preheatDescription.ts"

/**
 * `preheat` knowing only one role's command, for `preheat controller ...` and `preheat daemon ...`:
 * the process then evaluates none of the other commands' modules, the harness's included
 * (docs/benchmarks.md, "Daemon overhead and memory" and "The roles without the harness").
 */
export const roleOnlyCommand = <const Role extends Command.Command.Any>(role: Role) =>
  Command.make("preheat").pipe(Command.withDescription(description), Command.withSubcommands([role]))
