#!/usr/bin/env node
import { Effect } from "effect"
import { daemonCommand } from "./cli/daemonCommand.ts"
import { roleOnlyCommand } from "./cli/roleOnlyCommand.ts"
import { runPreheat } from "./cli/runPreheat.ts"

/**
 * `preheat daemon` alone: the single executable carries this as a bundle of its own beside the
 * whole one (seaMain.ts picks), because the daemon runs on every node and the code it never
 * runs still cost it memory: the source of the whole bundle, 1.6 MiB of idle RSS (issue 29).
 */
runPreheat(Effect.succeed(roleOnlyCommand(daemonCommand)))
