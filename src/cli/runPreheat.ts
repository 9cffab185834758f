// The modules themselves, not the package's index: that one also loads NodeHttpClient and with it undici.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Layer } from "effect"
import { CliError, Command } from "effect/cli"
import { escapeForeignLines } from "../api/goQuote.ts"
import { version } from "../version.ts"
import { usagePresenter } from "./presenter.ts"

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

/** Runs the command tree `load` gives with the process's arguments, as an entry point does. */
export const runPreheat = <Input, Context, E>(
  // The platform's file system and paths are the services a command may need (NodeServices gives them).
  load: Effect.Effect<Command.Command<"preheat", Input, Context, E, NodeServices.NodeServices>>
): void =>
  load.pipe(
    Effect.flatMap((preheat) => Command.run(preheat, { version })),
    Effect.provide(Layer.mergeAll(NodeServices.layer, usagePresenter)),
    Effect.catchCause(report),
    NodeRuntime.runMain
  )
