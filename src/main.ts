#!/usr/bin/env node
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import { CliError, Command } from "effect/cli"
import { apiserverCommand } from "./cli/apiserverCommand.ts"
import { controllerCommand } from "./cli/controllerCommand.ts"
import { crdsCommand } from "./cli/crdsCommand.ts"
import { daemonCommand } from "./cli/daemonCommand.ts"
import { devCommand } from "./cli/devCommand.ts"
import { fleetCommand } from "./cli/fleetCommand.ts"
import { usagePresenter } from "./cli/presenter.ts"
import { statusCommand } from "./cli/statusCommand.ts"
import { versionCommand } from "./cli/versionCommand.ts"
import { version } from "./version.ts"

const preheat = Command.make("preheat").pipe(
  Command.withDescription(
    "Pre-pulls container images onto Kubernetes nodes (ImagePullJob, ImageListPullJob, NodeImage of apps.kruise.io/v1alpha1)."
  ),
  Command.withSubcommands([
    apiserverCommand,
    controllerCommand,
    crdsCommand,
    daemonCommand,
    devCommand,
    fleetCommand,
    statusCommand,
    versionCommand
  ])
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
    process.stderr.write(`error: ${typeof message === "string" && message !== "" ? message : Cause.pretty(cause)}\n`)
    process.exitCode = 1
  })

Command.run(preheat, { version }).pipe(
  Effect.provide(Layer.mergeAll(NodeServices.layer, usagePresenter)),
  Effect.catchCause(report),
  NodeRuntime.runMain
)
