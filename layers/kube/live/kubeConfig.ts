// Where the client's cluster and credentials come from, in controller-runtime's order: an explicit
// path (--kubeconfig), $KUBECONFIG, the pod's service account, ~/.kube/config. client-node's own
// loadFromDefault would fall back to http://localhost:8080 instead of failing, which only defers the
// error to the first request.
import { existsSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, dirname, isAbsolute, join, resolve, sep } from "node:path"
import { type Cluster, KubeConfig, type User } from "@kubernetes/client-node"
import { Data, Effect, Predicate } from "effect"
import { parse as parseYaml } from "yaml"

/** The client cannot be configured: no or a broken kubeconfig, an unknown context, bad limits. */
export class KubeConfigError extends Data.TaggedError("KubeConfigError")<{ readonly message: string }> {}

export interface KubeConfigSource {
  /** A kubeconfig file; otherwise $KUBECONFIG, the service account, then ~/.kube/config. */
  readonly kubeconfig?: string | undefined
  /** A context of that kubeconfig instead of its current-context. */
  readonly context?: string | undefined
}

const serviceAccountToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// Parser errors quote the lines around the fault, which may hold a token: keep the first line only.
const firstLine = (error: unknown): string => String(error instanceof Error ? error.message : error).split("\n")[0] ?? ""

const execExtensionName = "client.authentication.k8s.io/exec"

// A cluster's `client.authentication.k8s.io/exec` extension, which client-node drops when it reads
// the file; an exec plugin with provideClusterInfo gets it as spec.cluster.config. It is kept on
// the cluster object itself, which client-node hands back as it was given.
const execExtension = Symbol("client.authentication.k8s.io/exec extension")
type ClusterWithExtension = Cluster & { readonly [execExtension]?: unknown }

/** The cluster's exec extension, when it came from a kubeconfig file read by loadKubeConfig. */
export const execExtensionOf = (cluster: Cluster): unknown => (cluster as ClusterWithExtension)[execExtension]

const rememberExecExtensions = (config: KubeConfig, document: unknown): void => {
  const clusters = Predicate.isObject(document) ? document["clusters"] : undefined
  const found = new Map<string, unknown>()
  for (const entry of Array.isArray(clusters) ? clusters : []) {
    const fields = Predicate.isObject(entry) ? entry["cluster"] : undefined
    const extensions = Predicate.isObject(fields) ? fields["extensions"] : undefined
    const named = (Array.isArray(extensions) ? extensions : []).find(
      (extension: unknown) => Predicate.isObject(extension) && extension["name"] === execExtensionName
    )
    if (Predicate.isObject(entry) && typeof entry["name"] === "string" && Predicate.isObject(named)) {
      found.set(entry["name"], named["extension"])
    }
  }
  config.clusters = config.clusters.map(
    (cluster): ClusterWithExtension => (found.has(cluster.name) ? { ...cluster, [execExtension]: found.get(cluster.name) } : cluster)
  )
}

// As client-go's loader: an exec command with a slash in it is relative to the file's directory;
// one without is looked up on PATH. client-node resolves certificate paths only.
const resolveExecCommands = (config: KubeConfig, directory: string): void => {
  config.users = config.users.map((user) => {
    const command: unknown = Predicate.isObject(user.exec) ? user.exec["command"] : undefined
    return typeof command === "string" && command.includes(sep) && !isAbsolute(command)
      ? { ...user, exec: { ...user.exec, command: resolve(directory, command) } }
      : user
  })
}

// A user's `tokenFile` (client-go's AuthInfo.TokenFile), which client-node does not read: it knows
// only a `token-file` key no other client writes. Kept on the user object itself, resolved against
// the kubeconfig's folder as client-go resolves it; an inline `token` takes precedence, as
// client-go documents.
const tokenFileKey = Symbol("kubeconfig tokenFile")
type UserWithTokenFile = User & { readonly [tokenFileKey]?: string | undefined }

/**
 * The file the user's bearer token is read from (tokenFile.ts): a kubeconfig's `tokenFile`, or the
 * service account's token of client-node's in-cluster user (a `tokenFile` auth provider).
 */
export const tokenFileOf = (user: User | null): string | undefined => {
  if (user === null || user.token) return undefined
  const fromKubeconfig = (user as UserWithTokenFile)[tokenFileKey]
  if (fromKubeconfig !== undefined) return fromKubeconfig
  const path: unknown = user.authProvider?.name === "tokenFile" ? user.authProvider.config?.["tokenFile"] : undefined
  return typeof path === "string" && path !== "" ? path : undefined
}

const rememberTokenFiles = (config: KubeConfig, document: unknown, directory: string): void => {
  const users = Predicate.isObject(document) ? document["users"] : undefined
  const found = new Map<string, string>()
  for (const entry of Array.isArray(users) ? users : []) {
    const fields = Predicate.isObject(entry) ? entry["user"] : undefined
    const tokenFile = Predicate.isObject(fields) ? fields["tokenFile"] : undefined
    if (Predicate.isObject(entry) && typeof entry["name"] === "string" && typeof tokenFile === "string" && tokenFile !== "") {
      found.set(entry["name"], resolve(directory, tokenFile))
    }
  }
  config.users = config.users.map(
    (user): UserWithTokenFile => (found.has(user.name) ? { ...user, [tokenFileKey]: found.get(user.name) } : user)
  )
}

const fromFile = (path: string): KubeConfig => {
  const config = new KubeConfig()
  config.loadFromFile(path)
  resolveExecCommands(config, dirname(path))
  const text = readFileSync(path, "utf8")
  if (text.includes(execExtensionName) || text.includes("tokenFile")) {
    // The yaml package, not client-node's loadYaml: that one brings its generated API into the bundles.
    const document: unknown = parseYaml(text)
    rememberExecExtensions(config, document)
    rememberTokenFiles(config, document, dirname(path))
  }
  return config
}

const fromFiles = (paths: ReadonlyArray<string>): KubeConfig => {
  const [first, ...rest] = paths
  const config = fromFile(first!)
  for (const path of rest) {
    // As kubectl merges $KUBECONFIG: the first file that sets a value wins, current-context included.
    config.mergeConfig(fromFile(path), Boolean(config.getCurrentContext()))
  }
  return config
}

const load = (source: KubeConfigSource, env: NodeJS.ProcessEnv): { readonly config: KubeConfig; readonly from: string } => {
  if (source.kubeconfig !== undefined && source.kubeconfig !== "") {
    return { config: fromFiles([source.kubeconfig]), from: source.kubeconfig }
  }
  const listed = (env["KUBECONFIG"] ?? "").split(delimiter).filter((path) => path !== "")
  if (listed.length > 0) return { config: fromFiles(listed), from: `$KUBECONFIG (${listed.join(delimiter)})` }
  if (env["KUBERNETES_SERVICE_HOST"] && env["KUBERNETES_SERVICE_PORT"] && existsSync(serviceAccountToken)) {
    const config = new KubeConfig()
    config.loadFromCluster()
    return { config, from: "the pod's service account" }
  }
  const home = join(env["HOME"] ?? homedir(), ".kube", "config")
  if (existsSync(home)) return { config: fromFiles([home]), from: home }
  throw new KubeConfigError({
    message: "no kubeconfig: pass --kubeconfig, set $KUBECONFIG, run in a pod with a service account, or create ~/.kube/config"
  })
}

/** The kubeconfig to use, switched to `source.context` if given; fails with a message a user can act on. */
export const loadKubeConfig = (
  source: KubeConfigSource,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<KubeConfig, KubeConfigError> => Effect.map(loadKubeConfigFrom(source, env), ({ config }) => config)

/** loadKubeConfig, and where it came from (a path, "$KUBECONFIG (...)", "the pod's service account") for messages. */
export const loadKubeConfigFrom = (
  source: KubeConfigSource,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<{ readonly config: KubeConfig; readonly from: string }, KubeConfigError> =>
  Effect.try({
    try: () => {
      const { config, from } = load(source, env)
      if (source.context !== undefined && source.context !== "") {
        if (config.getContextObject(source.context) === null) {
          const known = config
            .getContexts()
            .map((c) => c.name)
            .join(", ")
          throw new KubeConfigError({ message: `context "${source.context}" is not in ${from} (contexts: ${known || "none"})` })
        }
        config.setCurrentContext(source.context)
      }
      if (config.getCurrentCluster() === null) {
        throw new KubeConfigError({ message: `${from} names no cluster for context "${config.getCurrentContext()}"` })
      }
      return { config, from }
    },
    catch: (error) =>
      error instanceof KubeConfigError ? error : new KubeConfigError({ message: `cannot load the kubeconfig: ${firstLine(error)}` })
  })
