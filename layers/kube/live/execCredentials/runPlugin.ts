// One run of an exec credential plugin, as client-go runs it: the command with its args, the
// process's environment plus the kubeconfig's env and KUBERNETES_EXEC_INFO, the terminal only when
// interactive. Unlike client-go, a run is bounded by a timeout, and neither what the plugin prints
// nor its standard error ever reaches a message: either may hold the credential.
import { spawn } from "node:child_process"
import { Data, Duration, Effect, Result } from "effect"
import type { ExecConfig } from "./execConfig.ts"
import { type ExecCredential, parseExecCredential } from "./execCredential.ts"

/** The plugin gave no usable credential: names the command and the kubeconfig's installHint, never the plugin's output. */
export class ExecPluginError extends Data.TaggedError("ExecPluginError")<{ readonly message: string }> {}

/** How long a plugin may run by default before it is stopped (client-go waits forever). */
export const defaultPluginTimeout = Duration.minutes(1)

// A credential is a few kilobytes; a plugin printing more than this is not printing one.
const maxOutputBytes = 1024 * 1024

export interface PluginRun {
  readonly config: ExecConfig
  /** KUBERNETES_EXEC_INFO. */
  readonly execInfo: string
  /** The plugin gets this process's standard input and error (the user's terminal). */
  readonly interactive: boolean
  readonly timeout: Duration.Duration
}

/** How the process ended. */
type Outcome =
  | { readonly _tag: "NotStarted"; readonly code: string }
  | { readonly _tag: "Ended"; readonly exitCode: number | null; readonly signal: string | null; readonly stdout: string }
  | { readonly _tag: "TooMuchOutput" }

const problemOf = (outcome: Outcome): string | undefined => {
  switch (outcome._tag) {
    case "NotStarted":
      return outcome.code === "ENOENT" ? "was not found" : `could not be started (${outcome.code})`
    case "TooMuchOutput":
      return `printed more than ${maxOutputBytes} bytes and was stopped`
    case "Ended":
      if (outcome.signal !== null) return `was ended by ${outcome.signal}`
      return outcome.exitCode === 0
        ? undefined
        : `failed with exit code ${outcome.exitCode} (its output is not shown as it may hold credentials: run the command by hand to see it)`
  }
}

/** The credential the run printed, or what went wrong, in words naming nothing it printed. */
const credentialOf = (outcome: Outcome, config: ExecConfig): Result.Result<ExecCredential, string> => {
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

const start = (run: PluginRun): Effect.Effect<Outcome> =>
  Effect.callback<Outcome>((resume) => {
    const { config } = run
    const child = spawn(config.command, config.args, {
      env: { ...process.env, ...Object.fromEntries(config.env), KUBERNETES_EXEC_INFO: run.execInfo },
      stdio: [run.interactive ? "inherit" : "ignore", "pipe", run.interactive ? "inherit" : "ignore"],
      // Its own process group, so stopping it also stops whatever it started (a shell's children).
      detached: !run.interactive
    })
    let settled = false
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      try {
        if (run.interactive || child.pid === undefined) child.kill("SIGKILL")
        else process.kill(-child.pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
    const settle = (outcome: Outcome) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(outcome))
    }
    child.stdout?.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > maxOutputBytes) {
        stop()
        settle({ _tag: "TooMuchOutput" })
      } else chunks.push(chunk)
    })
    child.once("error", (error: NodeJS.ErrnoException) => settle({ _tag: "NotStarted", code: error.code ?? "unknown error" }))
    child.once("close", (exitCode, signal) => settle({ _tag: "Ended", exitCode, signal, stdout: Buffer.concat(chunks).toString("utf8") }))
    return Effect.sync(() => {
      if (!settled) stop()
    })
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
