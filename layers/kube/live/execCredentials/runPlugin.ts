// One run of an exec credential plugin, as client-go runs it: the command with its args, the
// process's environment plus the kubeconfig's env and KUBERNETES_EXEC_INFO, the terminal only when
// interactive. Unlike client-go, a run is bounded by a timeout, and neither what the plugin prints
// nor its standard error ever reaches a message: either may hold the credential.
import { Data, Duration, Effect, Result } from "effect"
import { maxPluginOutputBytes, type PluginOutcome, runCredentialPlugin } from "../../../credentialPluginProcess.ts"
import type { ExecConfig } from "./execConfig.ts"
import { type ExecCredential, parseExecCredential } from "./execCredential.ts"

/** The plugin gave no usable credential: names the command and the kubeconfig's installHint, never the plugin's output. */
export class ExecPluginError extends Data.TaggedError("ExecPluginError")<{ readonly message: string }> {}

/** How long a plugin may run by default before it is stopped (client-go waits forever). */
export const defaultPluginTimeout = Duration.minutes(1)

export interface PluginRun {
  readonly config: ExecConfig
  /** KUBERNETES_EXEC_INFO. */
  readonly execInfo: string
  /** The plugin gets this process's standard input and error (the user's terminal). */
  readonly interactive: boolean
  readonly timeout: Duration.Duration
}

const problemOf = (outcome: PluginOutcome): string | undefined => {
  switch (outcome._tag) {
    case "NotStarted":
      return outcome.code === "ENOENT" ? "was not found" : `could not be started (${outcome.code})`
    case "TooMuchOutput":
      return `printed more than ${maxPluginOutputBytes} bytes and was stopped`
    case "Ended":
      if (outcome.signal !== null) return `was ended by ${outcome.signal}`
      return outcome.exitCode === 0
        ? undefined
        : `failed with exit code ${outcome.exitCode} (its output is not shown as it may hold credentials: run the command by hand to see it)`
  }
}

/** The credential the run printed, or what went wrong, in words naming nothing it printed. */
const credentialOf = (outcome: PluginOutcome, config: ExecConfig): Result.Result<ExecCredential, string> => {
  const problem = problemOf(outcome)
  if (problem !== undefined) return Result.fail(problem)
  return outcome._tag === "Ended" ? parseExecCredential(outcome.stdout, config.apiVersion) : Result.fail("ended without output")
}

const pluginErrorOf = (config: ExecConfig, problem: string): ExecPluginError =>
  new ExecPluginError({
    message: `exec credential plugin ${config.command} of user "${config.user}" ${problem}${
      config.installHint === undefined ? "" : ` (install hint: ${config.installHint})`
    }`
  })

const start = (run: PluginRun): Effect.Effect<PluginOutcome> =>
  runCredentialPlugin({
    command: run.config.command,
    args: run.config.args,
    env: { ...process.env, ...Object.fromEntries(run.config.env), KUBERNETES_EXEC_INFO: run.execInfo },
    interactive: run.interactive
  })

/** One run of the plugin: its credential, or an ExecPluginError once it failed, printed something unusable or ran out of time. */
export const runPlugin = Effect.fn("ExecPlugin.run")(function* (run: PluginRun) {
  yield* Effect.annotateCurrentSpan({ "exec.command": run.config.command })
  yield* Effect.logDebug("running an exec credential plugin").pipe(Effect.annotateLogs({ command: run.config.command }))
  const outcome = yield* start(run).pipe(
    Effect.timeoutOrElse({
      duration: run.timeout,
      orElse: () => Effect.fail(pluginErrorOf(run.config, `gave no answer within ${Duration.format(run.timeout)} and was stopped`))
    })
  )
  const credential = credentialOf(outcome, run.config)
  return Result.isSuccess(credential) ? credential.success : yield* pluginErrorOf(run.config, credential.failure)
})
