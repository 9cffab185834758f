// A kubeconfig user's `exec` section (client.authentication.k8s.io v1 and v1beta1) checked as
// client-go's clientcmd checks it, and what the plugin is told in KUBERNETES_EXEC_INFO. client-node
// keeps the section as the YAML gave it and runs it without these checks.
import type { Cluster, User } from "@kubernetes/client-node"
import { Data, Predicate, Result } from "effect"
import { tokenFileOf } from "../kubeConfig.ts"

export const execApiVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"] as const
export type ExecApiVersion = (typeof execApiVersions)[number]

const interactiveModes = ["Never", "IfAvailable", "Always"] as const
export type InteractiveMode = (typeof interactiveModes)[number]

export interface ExecConfig {
  readonly user: string
  readonly apiVersion: ExecApiVersion
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: ReadonlyArray<readonly [name: string, value: string]>
  /** Told to whoever cannot run the plugin (one line; kubeconfigs often give several). */
  readonly installHint: string | undefined
  readonly provideClusterInfo: boolean
  readonly interactiveMode: InteractiveMode
}

/** The exec section cannot be used as written. */
export class ExecConfigError extends Data.TaggedError("ExecConfigError")<{ readonly message: string }> {}

const isStringArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/** client-node's other spelling: `auth-provider: {name: exec, config: {exec: ...}}` (client-go has none). */
const execSectionOf = (user: User): unknown => {
  if (user.exec !== undefined && user.exec !== null) return user.exec
  const provider: unknown = user.authProvider
  const config = Predicate.isObject(provider) ? provider["config"] : undefined
  return Predicate.isObject(config) ? config["exec"] : undefined
}

/** Whether the kubeconfig gives the user a plugin at all (whether or not it is used). */
export const hasExecSection = (user: User | null): boolean => user !== null && execSectionOf(user) !== undefined

/**
 * Whether the user authenticates through a plugin, as client-go decides: a token (or tokenFile), a
 * user name and password or a client certificate in the kubeconfig take precedence over `exec`.
 */
export const usesExecPlugin = (user: User | null): user is User =>
  user !== null &&
  execSectionOf(user) !== undefined &&
  !user.token &&
  tokenFileOf(user) === undefined &&
  !user.username &&
  !user.password &&
  !user.certData &&
  !user.certFile

/** The user's exec section as client-go reads it, or why it cannot be used. */
export const execConfigOf = (user: User): Result.Result<ExecConfig, ExecConfigError> => {
  const section = execSectionOf(user)
  const invalid = (problem: string) =>
    Result.fail(new ExecConfigError({ message: `the exec plugin of user "${user.name}" cannot be used: ${problem}` }))
  if (!Predicate.isObject(section)) return invalid("exec must be a mapping")
  if (user.exec && Predicate.isObject(user.authProvider)) return invalid("authProvider cannot be given together with exec")
  const { command, apiVersion, args, env, installHint, provideClusterInfo, interactiveMode } = section
  if (typeof command !== "string" || command === "") return invalid("command must be given")
  if (!execApiVersions.includes(apiVersion as ExecApiVersion)) {
    return invalid(
      `apiVersion must be one of ${execApiVersions.join(", ")}${typeof apiVersion === "string" ? `, not "${apiVersion}"` : ""}`
    )
  }
  if (args !== undefined && args !== null && !isStringArray(args)) return invalid("args must be a list of strings")
  if (env !== undefined && env !== null && !Array.isArray(env)) return invalid("env must be a list of name and value pairs")
  const pairs: Array<readonly [string, string]> = []
  for (const entry of Array.isArray(env) ? env : []) {
    const name = Predicate.isObject(entry) ? entry["name"] : undefined
    const value = Predicate.isObject(entry) ? entry["value"] : undefined
    if (typeof name !== "string" || name === "") return invalid("every env entry needs a name")
    if (typeof value !== "string") return invalid(`env ${name} needs a string value`)
    pairs.push([name, value])
  }
  // v1 requires the mode; v1beta1 defaults it to IfAvailable (client-go's defaulting).
  const mode = interactiveMode ?? (apiVersion === "client.authentication.k8s.io/v1beta1" ? "IfAvailable" : undefined)
  if (mode === undefined) return invalid("interactiveMode must be given (Never, IfAvailable or Always)")
  if (!interactiveModes.includes(mode as InteractiveMode)) return invalid("interactiveMode must be Never, IfAvailable or Always")
  return Result.succeed({
    user: user.name,
    apiVersion: apiVersion as ExecApiVersion,
    command,
    args: isStringArray(args) ? args : [],
    env: pairs,
    installHint: typeof installHint === "string" && installHint.trim() !== "" ? installHint.trim().replace(/\s*\n\s*/g, " ") : undefined,
    provideClusterInfo: provideClusterInfo === true,
    interactiveMode: mode as InteractiveMode
  })
}

/**
 * Whether the plugin gets the terminal, as client-go decides (`stdinIsTerminal` is false for the
 * controller and the daemon, which never have one); a plugin that needs one it cannot have fails.
 */
export const interactiveOf = (config: ExecConfig, stdinIsTerminal: boolean): Result.Result<boolean, ExecConfigError> => {
  switch (config.interactiveMode) {
    case "Never":
      return Result.succeed(false)
    case "IfAvailable":
      return Result.succeed(stdinIsTerminal)
    case "Always":
      return stdinIsTerminal
        ? Result.succeed(true)
        : Result.fail(
            new ExecConfigError({
              message: `the exec plugin ${config.command} of user "${config.user}" needs a terminal (interactiveMode: Always), and standard input is not a terminal`
            })
          )
  }
}

/** ExecCredential.spec.cluster: what provideClusterInfo tells the plugin about the cluster. */
export interface ExecClusterInfo {
  readonly server: string
  readonly "tls-server-name"?: string
  readonly "insecure-skip-tls-verify"?: true
  /** Base64 of the PEM, as Go encodes []byte. */
  readonly "certificate-authority-data"?: string
  readonly "proxy-url"?: string
  /** The cluster's `client.authentication.k8s.io/exec` extension. */
  readonly config?: unknown
}

/** The cluster as client-go describes it to the plugin; `ca` is the CA's PEM (from data or file), `extension` the cluster's exec extension. */
export const clusterInfoOf = (cluster: Cluster, ca: Buffer | null, extension: unknown): ExecClusterInfo => ({
  server: cluster.server,
  ...(cluster.tlsServerName ? { "tls-server-name": cluster.tlsServerName } : {}),
  ...(cluster.skipTLSVerify ? { "insecure-skip-tls-verify": true as const } : {}),
  ...(ca !== null && ca.length > 0 ? { "certificate-authority-data": ca.toString("base64") } : {}),
  ...(cluster.proxyUrl ? { "proxy-url": cluster.proxyUrl } : {}),
  ...(extension === undefined ? {} : { config: extension })
})

/** KUBERNETES_EXEC_INFO: an ExecCredential of the configured apiVersion with only its spec. */
export const execInfoOf = (config: ExecConfig, interactive: boolean, cluster: ExecClusterInfo | undefined): string =>
  JSON.stringify({
    kind: "ExecCredential",
    apiVersion: config.apiVersion,
    spec: { ...(config.provideClusterInfo && cluster !== undefined ? { cluster } : {}), interactive }
  })
