import { Command } from "effect/cli"
import { daemonCommand } from "./daemonCommand.ts"
import { description } from "./preheatDescription.ts"

/**
 * `preheat` knowing only `daemon`, for `preheat daemon ...`: the process on every node then
 * evaluates none of the other roles' modules (docs/benchmarks.md, "Daemon overhead and memory").
 */
export const daemonOnlyCommand = Command.make("preheat").pipe(
  Command.withDescription(description),
  Command.withSubcommands([daemonCommand])
)
