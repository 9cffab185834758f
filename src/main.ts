#!/usr/bin/env node
// The modules themselves, not the package's index: that one also loads NodeHttpClient and with it undici.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Layer } from "effect"
import { CliError, Command } from "effect/cli"
import { escapeForeignLines } from "./api/goQuote.ts"
import { usagePresenter } from "./cli/presenter.ts"
import { version } from "./version.ts"

/**
 * `preheat daemon` runs on every node, so it loads only its own command's modules; everything else
 * (and `preheat --log-level debug daemon`, whose first argument is a flag) gets every command. The
 * bundles keep both trees in one file; esbuild evaluates a module only once an `import()` asks for it.
 */
const loadCommand = Effect.promise(() =>
  process.argv[2] === "daemon"
    ? import("./cli/daemonOnlyCommand.ts").then((m) => m.daemonOnlyCommand)
    : import("./cli/preheatCommand.ts").then((m) => m.preheatCommand)
)

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
