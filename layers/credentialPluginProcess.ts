// One run of a program that prints a credential: a kubeconfig's exec credential plugin
// (kube/live/execCredentials/) or a kubelet image credential provider plugin (cri/live/). Both
// are bounded by their caller's timeout; interrupting the run kills the plugin's process group,
// so what a shell plugin started goes with it. Its output is collected up to a bound and handed
// back whole, never logged: it may hold the credential.
import { spawn } from "node:child_process"
import { Effect } from "effect"

// A credential is a few kilobytes; a plugin printing more than this is not printing one.
export const maxPluginOutputBytes = 1024 * 1024

export interface CredentialPluginProcess {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  /** Written to the plugin's standard input, which is then closed; none: no standard input. */
  readonly stdin?: string
  /** The plugin gets this process's standard input and error (the user's terminal), in this process's group. */
  readonly interactive?: boolean
}

/** How the process ended. */
export type PluginOutcome =
  | { readonly _tag: "NotStarted"; readonly code: string }
  | { readonly _tag: "Ended"; readonly exitCode: number | null; readonly signal: string | null; readonly stdout: string }
  | { readonly _tag: "TooMuchOutput" }

export const runCredentialPlugin = (plugin: CredentialPluginProcess): Effect.Effect<PluginOutcome> =>
  Effect.callback<PluginOutcome>((resume) => {
    const interactive = plugin.interactive === true
    const child = spawn(plugin.command, [...plugin.args], {
      env: plugin.env,
      stdio: [plugin.stdin !== undefined ? "pipe" : interactive ? "inherit" : "ignore", "pipe", interactive ? "inherit" : "ignore"],
      // Its own process group, so stopping it also stops whatever it started (a shell's children).
      detached: !interactive
    })
    let settled = false
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      try {
        if (interactive || child.pid === undefined) child.kill("SIGKILL")
        else process.kill(-child.pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
    const settle = (outcome: PluginOutcome) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(outcome))
    }
    child.stdout?.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > maxPluginOutputBytes) {
        stop()
        settle({ _tag: "TooMuchOutput" })
      } else chunks.push(chunk)
    })
    if (plugin.stdin !== undefined) {
      // A plugin that exits without reading its input closes the pipe under us: not our failure.
      child.stdin?.on("error", () => {})
      child.stdin?.end(plugin.stdin)
    }
    child.once("error", (error: NodeJS.ErrnoException) => settle({ _tag: "NotStarted", code: error.code ?? "unknown error" }))
    child.once("close", (exitCode, signal) => settle({ _tag: "Ended", exitCode, signal, stdout: Buffer.concat(chunks).toString("utf8") }))
    return Effect.sync(() => {
      if (!settled) stop()
    })
  })
