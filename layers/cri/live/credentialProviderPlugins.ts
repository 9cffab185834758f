// Credential provider plugins as the kubelet runs them (pkg/credentialprovider/plugin plugin.go
// ExecPlugin): BIN_DIR/NAME with the provider's args, the daemon's environment plus the provider's
// env (the provider's value wins), the request on stdin, the response on stdout. What a plugin
// prints on stdout or stderr never reaches a message or a log: either may hold the credential.
import { constants } from "node:fs"
import { access, readdir, readFile, stat } from "node:fs/promises"
import { extname, join } from "node:path"
import { Data, Duration, Effect, Layer, Result } from "effect"
import {
  type ConfigFile,
  decodeCredentialProviderConfig,
  type InvalidCredentialProviderConfig
} from "../../../src/cri/credentialProvider/config.ts"
import { CredentialProviders, defaultRunTimeout, makeCredentialProviders } from "../../../src/cri/credentialProvider/CredentialProviders.ts"
import { type PluginRun, PluginRunFailed, PluginRunner } from "../../../src/cri/credentialProvider/PluginRunner.ts"
import type { Metrics } from "../../../src/ops/metrics.ts"
import { maxPluginOutputBytes, type PluginOutcome, runCredentialPlugin } from "../../credentialPluginProcess.ts"

const start = (binDir: string, run: PluginRun): Effect.Effect<PluginOutcome> =>
  runCredentialPlugin({
    command: join(binDir, run.name),
    args: run.args,
    env: { ...process.env, ...Object.fromEntries(run.env.map(({ name, value }) => [name, value])) },
    stdin: run.stdin
  })

const failureOf = (outcome: PluginOutcome): PluginRunFailed | undefined => {
  switch (outcome._tag) {
    case "NotStarted":
      return outcome.code === "ENOENT"
        ? new PluginRunFailed({ reason: "not_found", message: "its plugin was not found in the bin directory" })
        : outcome.code === "EACCES"
          ? new PluginRunFailed({ reason: "not_found", message: "its plugin is not executable" })
          : new PluginRunFailed({ reason: "failed", message: `its plugin could not be started (${outcome.code})` })
    case "TooMuchOutput":
      return new PluginRunFailed({
        reason: "failed",
        message: `its plugin printed more than ${maxPluginOutputBytes} bytes and was stopped`
      })
    case "Ended":
      if (outcome.signal !== null) return new PluginRunFailed({ reason: "failed", message: `its plugin was ended by ${outcome.signal}` })
      return outcome.exitCode === 0
        ? undefined
        : new PluginRunFailed({
            reason: "failed",
            message: `its plugin exited with code ${outcome.exitCode} (its output is not shown as it may hold credentials)`
          })
  }
}

/** Plugins in `binDir`; a run interrupted (its time is up, the daemon stops) kills its process group. */
const pluginRunner = (binDir: string): PluginRunner["Service"] =>
  PluginRunner.of({
    run: (run) =>
      Effect.flatMap(start(binDir, run), (outcome) => {
        const failure = failureOf(outcome)
        return failure !== undefined ? Effect.fail(failure) : Effect.succeed(outcome._tag === "Ended" ? outcome.stdout : "")
      }),
    exists: (name) =>
      Effect.promise(() =>
        access(join(binDir, name), constants.X_OK).then(
          () => true,
          () => false
        )
      )
  })

/** The config file or directory could not be read, or the bin directory is not there. */
class CredentialProviderSetupFailed extends Data.TaggedError("CredentialProviderSetupFailed")<{ readonly message: string }> {}

const configExtensions: ReadonlyArray<string> = [".json", ".yaml", ".yml"]

/** The config's files: the one given, or a directory's `*.json`, `*.yaml`, `*.yml` in name order (the kubelet's readCredentialProviderConfig). */
const readConfigFiles = (path: string): Effect.Effect<ReadonlyArray<ConfigFile>, CredentialProviderSetupFailed> =>
  Effect.tryPromise({
    try: async () => {
      const info = await stat(path)
      if (!info.isDirectory()) return [{ path, text: await readFile(path, "utf8") }]
      const entries = await readdir(path, { withFileTypes: true })
      const names = entries
        .filter((e) => !e.isDirectory() && configExtensions.includes(extname(e.name)))
        .map((e) => e.name)
        .sort()
      if (names.length === 0) throw new Error(`no configuration files found in directory ${path}`)
      return Promise.all(names.map(async (name) => ({ path: join(path, name), text: await readFile(join(path, name), "utf8") })))
    },
    catch: (error) =>
      new CredentialProviderSetupFailed({
        message: `--image-credential-provider-config ${path}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

const checkBinDir = (binDir: string): Effect.Effect<void, CredentialProviderSetupFailed> =>
  Effect.tryPromise({
    try: async () => {
      const info = await stat(binDir)
      if (!info.isDirectory()) throw new Error("not a directory")
    },
    catch: (error) =>
      new CredentialProviderSetupFailed({
        message: `--image-credential-provider-bin-dir ${binDir}: ${
          (error as NodeJS.ErrnoException).code === "ENOENT"
            ? "plugin binary directory does not exist"
            : error instanceof Error
              ? error.message
              : String(error)
        }`
      })
  })

export interface CredentialProviderFlags {
  readonly configPath: string
  readonly binDir: string
  /** How long one run may take; the kubelet's minute unless a test lowers it. */
  readonly runTimeout?: Duration.Input
}

/**
 * CredentialProviders from the config file and plugins of the flags. A config the kubelet would
 * refuse, an unreadable one or a missing bin directory fails the layer (the daemon does not start);
 * a missing plugin is only warned about (it may be installed later) and fails the pulls it would serve.
 */
export const credentialProvidersLayer = (
  flags: CredentialProviderFlags
): Layer.Layer<CredentialProviders, CredentialProviderSetupFailed | InvalidCredentialProviderConfig, Metrics> =>
  Layer.effect(
    CredentialProviders,
    Effect.gen(function* () {
      const files = yield* readConfigFiles(flags.configPath)
      const config = decodeCredentialProviderConfig(files)
      if (Result.isFailure(config)) return yield* config.failure
      yield* checkBinDir(flags.binDir)
      const providers = yield* makeCredentialProviders(config.success, { runTimeout: flags.runTimeout ?? defaultRunTimeout }).pipe(
        Effect.provideService(PluginRunner, pluginRunner(flags.binDir))
      )
      yield* Effect.logInfo("credential providers").pipe(
        Effect.annotateLogs({
          config: flags.configPath,
          binDir: flags.binDir,
          providers: config.success.providers.map((p) => p.name).join(","),
          runTimeout: Duration.format(Duration.fromInputUnsafe(flags.runTimeout ?? defaultRunTimeout))
        })
      )
      return providers
    })
  )
