#!/usr/bin/env node
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Effect, Layer } from "effect"
import { CliError, Command } from "effect/cli"
import { crdsCommand } from "./cli/crdsCommand.ts"
import { usagePresenter } from "./cli/presenter.ts"
import { versionCommand } from "./cli/versionCommand.ts"
import { version } from "./version.ts"

const preheat = Command.make("preheat").pipe(
  Command.withDescription(
    "Pre-pulls container images onto Kubernetes nodes (ImagePullJob, ImageListPullJob, NodeImage of apps.kruise.io/v1alpha1)."
  ),
  Command.withSubcommands([crdsCommand, versionCommand])
)

/** Usage errors exit 2 (as kubectl and most Unix tools do); failures of the work itself exit 1. */
const exitCodeOf = (cause: Cause.Cause<unknown>): number =>
  cause.reasons.some((reason) => Cause.isFailReason(reason) && CliError.isCliError(reason.error)) ? 2 : 1

Command.run(preheat, { version }).pipe(
  Effect.provide(Layer.mergeAll(NodeServices.layer, usagePresenter)),
  Effect.catchCause((cause) =>
    Effect.sync(() => {
      process.exitCode = exitCodeOf(cause)
    })
  ),
  NodeRuntime.runMain
)
