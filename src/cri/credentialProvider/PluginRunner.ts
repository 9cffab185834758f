import { Context, Data } from "effect"
import type { Effect } from "effect"

/** One run of a provider's plugin: the executable `name` in the bin directory, its args and env, the request on stdin. */
export interface PluginRun {
  readonly name: string
  readonly args: ReadonlyArray<string>
  /** Added to the daemon's own environment; a name in both takes this value, as the kubelet merges them. */
  readonly env: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly stdin: string
}

/**
 * The plugin did not answer: it is missing or not executable, could not be started, exited
 * non-zero, was ended by a signal or printed too much. Says which, never what it printed.
 */
export class PluginRunFailed extends Data.TaggedError("PluginRunFailed")<{
  readonly reason: "not_found" | "failed"
  readonly message: string
}> {}

/**
 * Runs credential provider plugins (`--image-credential-provider-bin-dir`). Live body: a child
 * process per run (layers/cri/live/credentialProviderPlugins.ts), stopped with its process group
 * when the run is interrupted; tests use a fake. The caller bounds a run's time.
 */
export class PluginRunner extends Context.Service<
  PluginRunner,
  {
    /** What the plugin printed on stdout when it exited 0. */
    readonly run: (run: PluginRun) => Effect.Effect<string, PluginRunFailed>
    /** Whether the plugin is there and executable (checked at start, to warn early). */
    readonly exists: (name: string) => Effect.Effect<boolean>
  }
>()("preheat/cri/credentialProvider/PluginRunner") {}
