/**
 * Which credentials apply to an image, by the kubelet's keyring rules (k8s.io/kubernetes
 * pkg/credentialprovider, BasicDockerKeyring.Add / Lookup / URLsMatch). One matcher for the
 * registry keys of pull secrets, the `auth` keys of credential providers' answers and the
 * providers' `matchImages` (the kubelet uses URLsMatch for all three):
 *
 * - a key is read as a URL: an `https://` or `http://` scheme is dropped, and a path starting
 *   with `/v1/` or `/v2/` (the registry API version, as in `https://index.docker.io/v1/`) counts
 *   as no path;
 * - the key's host matches the image's registry label by label, with the same number of labels;
 *   each key label is a glob (`*` within one label, `[a-z]`), so `*.example.com` matches
 *   `a.example.com` but neither `example.com` nor `a.b.example.com` (a `?` would be one
 *   character, but URL parsing has already cut the key there, as in the kubelet);
 * - ports must be equal (none matches none only);
 * - the key's path must be a prefix of the image's repository path. Like the kubelet this is a
 *   string prefix: `quay.io/core` matches `quay.io/coreos/etcd`;
 * - more specific keys come first.
 *
 * Two deliberate differences:
 * - `docker.io`, `index.docker.io` and `registry-1.docker.io` are one registry here (the kubelet
 *   only falls back to `index.docker.io` keys when no other key matched a Docker Hub image), in
 *   `matchImages` too;
 * - keys are ordered longest first, then reverse-lexically as the kubelet does (for keys where one
 *   extends the other the two orders agree), and a credential met twice is tried once.
 */
import { Equal, Result } from "effect"
import { parseImageReference } from "../api/imageReference.ts"
import type { ParsedSecret, RegistryCredential } from "./dockerConfig.ts"

export {
  InvalidPullSecret,
  ParsedSecret,
  parsePullSecret,
  registryCredential,
  type SecretLike
} from "./dockerConfig.ts"

const dockerHub = "docker.io"
const dockerHubAliases: ReadonlySet<string> = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"])

interface Location {
  readonly labels: ReadonlyArray<string>
  readonly port: string
  /** Starts with "/" when not empty. */
  readonly path: string
}

/** Go's net.SplitHostPort, falling back to the whole host without a port as the kubelet does. */
const splitHostPort = (host: string): { readonly hostname: string; readonly port: string } => {
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(host)
  if (bracketed !== null) return { hostname: bracketed[1] ?? "", port: bracketed[2] ?? "" }
  const colon = host.indexOf(":")
  if (colon >= 0 && colon === host.lastIndexOf(":") && !host.startsWith("[")) {
    return { hostname: host.slice(0, colon), port: host.slice(colon + 1) }
  }
  return { hostname: host, port: "" }
}

const locate = (host: string, path: string): Location => {
  const { hostname, port } = splitHostPort(host)
  return { labels: hostname.split("."), port, path }
}

/**
 * The keyring key of a docker config entry: host[:port][/path], scheme and API version dropped,
 * Docker Hub's names folded into `docker.io`. Undefined when it names no host.
 */
export const normaliseRegistryKey = (raw: string): string | undefined => {
  const schemeless = raw.replace(/^https?:\/\//, "")
  // Like url.Parse: the host ends at the path, query or fragment, and user info is not the host.
  const end = schemeless.search(/[/?#]/)
  const authority = end < 0 ? schemeless : schemeless.slice(0, end)
  const rest = end < 0 ? "" : schemeless.slice(end)
  const host = authority.slice(authority.lastIndexOf("@") + 1)
  let path = rest.startsWith("/") ? rest.replace(/[?#].*$/, "") : ""
  if (path.startsWith("/v1/") || path.startsWith("/v2/")) path = path.slice(3)
  if (host === "") return undefined
  const folded = dockerHubAliases.has(host) ? dockerHub : host
  return path === "" || path === "/" ? folded : folded + path
}

const keyLocation = (key: string): Location => {
  const slash = key.indexOf("/")
  return slash < 0 ? locate(key, "") : locate(key.slice(0, slash), key.slice(slash))
}

/**
 * Go's path/filepath.Match for one host label: `*`, `?`, `[...]` classes with ranges and `^`
 * negation, and `\` escapes. A malformed pattern matches nothing, as the kubelet treats
 * ErrBadPattern as no match.
 */
const labelGlob = (pattern: string): RegExp | undefined => {
  let source = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? ""
    if (c === "*") source += ".*"
    else if (c === "?") source += "."
    else if (c === "\\") {
      const next = pattern[++i]
      if (next === undefined) return undefined
      source += escapeRegExp(next)
    } else if (c === "[") {
      const close = pattern.indexOf("]", i + 2)
      if (close < 0) return undefined
      let body = pattern.slice(i + 1, close)
      const negated = body.startsWith("^")
      if (negated) body = body.slice(1)
      if (body === "") return undefined
      source += `[${negated ? "^" : ""}${body.replace(/[\]\\^]/g, "\\$&")}]`
      i = close
    } else source += escapeRegExp(c)
  }
  try {
    return new RegExp(`^${source}$`)
  } catch {
    return undefined
  }
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")

const matches = (key: Location, image: Location): boolean =>
  key.port === image.port &&
  key.labels.length === image.labels.length &&
  image.path.startsWith(key.path) &&
  key.labels.every((label, i) => labelGlob(label)?.test(image.labels[i] ?? "") === true)

/** Longest first; equal lengths reverse-lexically, the kubelet's order (exact hosts before globs). */
const bySpecificity = (a: string, b: string): number => b.length - a.length || (a < b ? 1 : a > b ? -1 : 0)

/** Where a repository (`domain/path`, as `repositoryOf` gives it) is, for matching. */
const repositoryLocation = (repository: string): Location => {
  const slash = repository.indexOf("/")
  return slash < 0 ? locate(repository, "") : locate(repository.slice(0, slash), repository.slice(slash))
}

/**
 * The repository of an image reference as the kubelet names it when it looks up credentials and
 * asks credential providers: domain and path, normalised, without tag or digest
 * (`nginx:1.25` -> `docker.io/library/nginx`). Undefined when the reference does not parse.
 */
export const repositoryOf = (image: string): string | undefined => {
  const parsed = parseImageReference(image)
  return Result.isSuccess(parsed) ? `${parsed.success.domain}/${parsed.success.path}` : undefined
}

/**
 * Whether one pattern (a registry key of a docker config or of a credential provider's answer, or
 * an entry of a provider's `matchImages`) matches a repository: the kubelet's URLsMatch.
 */
export const matchesRepository = (pattern: string, repository: string): boolean => {
  const key = normaliseRegistryKey(pattern)
  return key !== undefined && matches(keyLocation(key), repositoryLocation(repository))
}

/** One keyring entry: a registry key as written, and what it holds. */
export interface KeyringEntry<A> {
  readonly key: string
  readonly value: A
}

/**
 * The values whose keys match `repository`, most specific key first; values under one key (or
 * under keys that normalise alike) keep the order of `entries`. The kubelet's BasicDockerKeyring
 * Add and Lookup, for pull secrets and credential providers' answers alike.
 */
export const keyringLookup = <A>(repository: string, entries: ReadonlyArray<KeyringEntry<A>>): ReadonlyArray<A> => {
  const target = repositoryLocation(repository)
  const byKey = new Map<string, Array<A>>()
  for (const entry of entries) {
    const key = normaliseRegistryKey(entry.key)
    if (key === undefined) continue
    const list = byKey.get(key) ?? []
    list.push(entry.value)
    byKey.set(key, list)
  }
  const result: Array<A> = []
  for (const key of [...byKey.keys()].sort(bySpecificity)) {
    if (matches(keyLocation(key), target)) result.push(...(byKey.get(key) ?? []))
  }
  return result
}

/** A credential and where it came from, as a failed pull names it (`pull secret NS/NAME`, `credential provider NAME`). */
export interface SourcedCredential {
  readonly credential: RegistryCredential
  readonly source: string
}

/** Each credential once, at its first place (the same one from two sources is tried once, under the first source). */
export const distinctCredentials = (credentials: ReadonlyArray<SourcedCredential>): ReadonlyArray<SourcedCredential> => {
  const result: Array<SourcedCredential> = []
  for (const sourced of credentials) {
    if (!result.some((seen) => Equal.equals(seen.credential, sourced.credential))) result.push(sourced)
  }
  return result
}

/** How a failed pull names a pull secret among the sources it tried. */
const secretSource = (secret: ParsedSecret): string => `pull secret ${secret.namespace}/${secret.name}`

/**
 * The pull secrets' credentials to try for `image`, in order; empty when no key matches (pull
 * anonymously) or when the reference does not parse (the runtime will refuse it anyway).
 */
export const credentialsFor = (image: string, secrets: ReadonlyArray<ParsedSecret>): ReadonlyArray<SourcedCredential> => {
  const repository = repositoryOf(image)
  if (repository === undefined) return []
  // Credentials under one key keep the order of the secrets, then of the entries.
  const entries = secrets.flatMap((secret) =>
    secret.entries.map((entry) => ({ key: entry.registry, value: { credential: entry.credential, source: secretSource(secret) } }))
  )
  return distinctCredentials(keyringLookup(repository, entries))
}
