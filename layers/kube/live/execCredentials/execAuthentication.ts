// The exec credential plugin of the kubeconfig's current user, made once per transport: its
// settings checked up front, its credential cached on the Effect clock and shared by concurrent
// requests, replaced when expired or refused. Everything else about the user and cluster (CA,
// server name, proxy, impersonation) stays client-node's.
import { bufferFromFileOrString, type KubeConfig, type User } from "@kubernetes/client-node"
import { type Duration, Effect, Result } from "effect"
import type { Scope } from "effect"
import { execExtensionOf } from "../kubeConfig.ts"
import { makeCredentialCache } from "./credentialCache.ts"
import { clusterInfoOf, ExecConfigError, execConfigOf, execInfoOf, interactiveOf, usesExecPlugin } from "./execConfig.ts"
import type { ExecCredential } from "./execCredential.ts"
import { defaultPluginTimeout, type ExecPluginError, runPlugin } from "./runPlugin.ts"

export interface ExecAuthentication {
  /** The credential for the next request: the cached one while valid, else one plugin run shared by all asking meanwhile. */
  readonly current: Effect.Effect<ExecCredential, ExecPluginError>
  /** The server answered 401 to a request made with `seen`: the next request runs the plugin, once however many were refused. */
  readonly rejected: (seen: ExecCredential) => Effect.Effect<void>
}

export interface ExecAuthenticationOptions {
  /** How long one plugin run may take (default defaultPluginTimeout, 1 minute). */
  readonly pluginTimeout?: Duration.Duration | undefined
  /** Whether standard input is a terminal the plugin may use (default false: the controller and the daemon never have one). */
  readonly stdinIsTerminal?: boolean | undefined
}

/** The user as client-node should apply it when the plugin runs here: no exec section. */
const userWithout = (user: User): User => {
  const { exec: _, authProvider, ...rest } = user
  const isExecProvider = authProvider?.name === "exec" || authProvider?.config?.exec !== undefined
  return authProvider === undefined || authProvider === null || isExecProvider ? rest : { ...rest, authProvider }
}

/** `config` with its current user's exec plugin left to this module. */
export const withoutExecPlugin = (config: KubeConfig): KubeConfig => {
  const user = config.getCurrentUser()
  if (user === null) return config
  const derived: KubeConfig = Object.create(config)
  const replaced = userWithout(user)
  derived.getCurrentUser = () => replaced
  return derived
}

/** The plugin of the current user when client-go would run one (see usesExecPlugin), else undefined. */
export const makeExecAuthentication = (
  config: KubeConfig,
  options: ExecAuthenticationOptions = {}
): Effect.Effect<ExecAuthentication | undefined, ExecConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const user = config.getCurrentUser()
    if (!usesExecPlugin(user)) return undefined
    const exec = execConfigOf(user)
    if (Result.isFailure(exec)) return yield* exec.failure
    const interactive = interactiveOf(exec.success, options.stdinIsTerminal ?? false)
    if (Result.isFailure(interactive)) return yield* interactive.failure
    const cluster = config.getCurrentCluster()
    const clusterInfo =
      exec.success.provideClusterInfo && cluster !== null
        ? yield* Effect.try({
            try: () => clusterInfoOf(cluster, bufferFromFileOrString(cluster.caFile, cluster.caData), execExtensionOf(cluster)),
            catch: () =>
              new ExecConfigError({
                message: `cannot read certificate-authority ${cluster.caFile} of cluster "${cluster.name}" for the exec plugin`
              })
          })
        : undefined
    const run = {
      config: exec.success,
      execInfo: execInfoOf(exec.success, interactive.success, clusterInfo),
      interactive: interactive.success,
      timeout: options.pluginTimeout ?? defaultPluginTimeout
    }
    const cache = yield* makeCredentialCache(
      Effect.map(runPlugin(run), (credential) => ({ value: credential, expiresAt: credential.expiresAt }))
    )
    return { current: cache.get, rejected: cache.invalidate }
  })
