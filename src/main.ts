#!/usr/bin/env node
// The modules themselves, not the package's index: that one also loads NodeHttpClient and with it undici.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Layer } from "effect"
import { CliError, Command } from "effect/cli"
import { escapeForeignLines } from "./api/goQuote.ts"
import { usagePresenter } from "./cli/presenter.ts"
import { roleOnlyCommand } from "./cli/roleOnlyCommand.ts"
import { version } from "./version.ts"

/**
 * `preheat controller` and `preheat daemon` (the roles, one on every node) load only their own
 * command's modules; everything else (and `preheat --log-level debug daemon`, whose first argument
 * is a flag) gets every command, the harness's too: harness/commands.ts is the one module of
 * harness/ the product names, and only here, through `import()`. The bundles keep all of it in one
 * file; esbuild evaluates a module only once an `import()` asks for it.
 */
const loadCommand = Effect.promise(async () => {
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

const isUsageError = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((reason) => Cause.isFailReason(reason) && CliError.isCliError(reason.error))

/**
 * Usage errors exit 2 (as kubectl and most Unix tools do; the presenter has printed them); a
 * failure of the work itself prints one line with its message and exits 1; a defect (a bug)
 * prints its full cause.
 */
const report = (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => {
    if (isUsageError(cause)) {
      process.exitCode = 2
      return
    }
    if (Cause.hasInterruptsOnly(cause)) return
    const failure = cause.reasons.find(Cause.isFailReason)
    const message = failure === undefined ? Cause.pretty(cause) : (failure.error as { message?: unknown }).message
    // The message may repeat what a user or a server wrote: escaped line by line (goQuote.ts).
    process.stderr.write(`error: ${escapeForeignLines(typeof message === "string" && message !== "" ? message : Cause.pretty(cause))}\n`)
    process.exitCode = 1
  })

loadCommand.pipe(
  Effect.flatMap((preheat) => Command.run(preheat, { version })),
  Effect.provide(Layer.mergeAll(NodeServices.layer, usagePresenter)),
  Effect.catchCause(report),
  NodeRuntime.runMain
)
