/**
 * Image pull secrets: the `kubernetes.io/dockerconfigjson` and `kubernetes.io/dockercfg` Secret
 * formats, decoded into registry credentials.
 *
 * Everything here holds secrets, so nothing here prints them: credentials and parsed secrets
 * turn into `<redacted>` under String(), JSON.stringify, util.inspect and Effect's formatters,
 * and the errors name the secret and the kind of problem but never quote its data (JSON and
 * base64 parsers put the offending input in their messages, so theirs are never passed on).
 */
import { Data, Equal, Hash, Redactable, Result, Schema, SchemaIssue } from "effect"
import { Base64 } from "effect/encoding"
import { quoteBounded } from "../api/goQuote.ts"
import type { RegistryAuth } from "./CriRuntime.ts"

const redacted = "<redacted>"
const inspectCustom = Symbol.for("nodejs.util.inspect.custom")

const authFields = ["username", "password", "auth", "identityToken", "registryToken"] as const

/**
 * One set of registry credentials, as CRI's AuthConfig wants them. The fields are plain strings
 * so the runtime layer can copy them into the gRPC request and tests can compare them with
 * `toEqual` or `Equal.equals`; every way of printing the object prints `<redacted>`.
 */
export class RegistryCredential implements RegistryAuth {
  // `declare`: no own property for an absent field, so equal credentials are deep-equal.
  declare readonly username?: string
  declare readonly password?: string
  declare readonly auth?: string
  declare readonly identityToken?: string
  declare readonly registryToken?: string

  constructor(fields: RegistryAuth) {
    for (const key of authFields) {
      const value = fields[key]
      // Empty strings are Go's zero values in the secret: the same as absent.
      if (value !== undefined && value !== "") Object.assign(this, { [key]: value })
    }
  }

  toString(): string {
    return redacted
  }

  toJSON(): string {
    return redacted
  }

  [inspectCustom](): string {
    return redacted
  }

  [Redactable.symbolRedactable](): string {
    return redacted
  }

  [Equal.symbol](that: unknown): boolean {
    return that instanceof RegistryCredential && authFields.every((key) => this[key] === that[key])
  }

  [Hash.symbol](): number {
    return Hash.array(authFields.map((key) => this[key] ?? ""))
  }
}

export const registryCredential = (fields: RegistryAuth): RegistryCredential => new RegistryCredential(fields)

/** One `auths` entry: the registry key as written in the secret, and its credentials. */
export interface DockerConfigEntry {
  readonly registry: string
  readonly credential: RegistryCredential
}

/**
 * The usable content of one pull secret. Prints its name only: even the registry keys stay out
 * of output, since a key may be a URL with user info in it (a problem names an entry by its host
 * alone: `entryName`).
 */
export class ParsedSecret {
  readonly namespace: string
  readonly name: string
  readonly entries: ReadonlyArray<DockerConfigEntry>

  constructor(fields: {
    readonly namespace: string
    readonly name: string
    readonly entries: ReadonlyArray<DockerConfigEntry>
  }) {
    this.namespace = fields.namespace
    this.name = fields.name
    this.entries = fields.entries
  }

  toString(): string {
    return `ParsedSecret(${this.namespace}/${this.name}: ${redacted})`
  }

  toJSON(): unknown {
    return { _tag: "ParsedSecret", namespace: this.namespace, name: this.name, entries: redacted }
  }

  [inspectCustom](): string {
    return this.toString()
  }

  [Redactable.symbolRedactable](): unknown {
    return this.toJSON()
  }
}

const secretTypes = {
  dockerConfigJson: "kubernetes.io/dockerconfigjson",
  dockercfg: "kubernetes.io/dockercfg"
} as const

const dataKeys = {
  [secretTypes.dockerConfigJson]: ".dockerconfigjson",
  [secretTypes.dockercfg]: ".dockercfg"
} as const

/**
 * A pull secret that is not a usable docker config. Says which secret, which data key (and which
 * entry, by its host) and what is wrong, never what it holds.
 */
export class InvalidPullSecret extends Data.TaggedError("InvalidPullSecret")<{
  readonly namespace: string
  readonly name: string
  /** The data key the problem is in (`.dockerconfigjson`, `.dockercfg`); absent when the type is wrong. */
  readonly key: string | undefined
  readonly reason: string
  readonly message: string
}> {
  constructor(args: { readonly namespace: string; readonly name: string; readonly key?: string | undefined; readonly reason: string }) {
    super({ ...args, key: args.key, message: `pull secret ${args.namespace}/${args.name} is unusable: ${args.reason}` })
  }
}

/** What the daemon reads from a Secret; a KubeObject of kind Secret fits. */
export interface SecretLike {
  readonly metadata?: { readonly name?: string; readonly namespace?: string }
  readonly type?: unknown
  readonly data?: unknown
}

// Go's encoding/json leaves a field empty for `null`, so the kubelet accepts null here too.
const field = Schema.optionalKey(Schema.NullOr(Schema.String))

const Entry = Schema.Struct({
  username: field,
  password: field,
  auth: field,
  identitytoken: field,
  registrytoken: field
})
type Entry = typeof Entry.Type

const Entries = Schema.Record(Schema.String, Entry)

const decodeDockerConfigJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Struct({ auths: Schema.optionalKey(Entries) })))
const decodeDockercfg = Schema.decodeUnknownResult(Schema.fromJsonString(Entries))

const toIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const entryFieldNames: ReadonlySet<PropertyKey> = new Set(Object.keys(Entry.fields))

/**
 * An entry as a problem names it: by the host[:port] of its registry key, quoted. The key is a URL
 * and may hold user info, a path or a query (a token in it), which stay out; a key whose host
 * cannot be told apart from its user info (an `@` after a `/`, as in `user:pa/ss@host`) or is no
 * host name is not named at all.
 */
const entryName = (registry: string): string => {
  const { host, unsure } = registryHost(registry)
  return unsure || !hostName.test(host) ? "an entry" : `entry ${quoteBounded(host, 253)}`
}

// A host name, a bracketed IPv6 address, or a kubelet glob (`*.example.com`), with an optional port.
const hostName = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9*?[\]._-]+)(:[0-9]+)?$/

/** The host[:port] of a registry key read as a URL (scheme, user info, path and query dropped), as the kubelet parses it. */
const registryHost = (registry: string): { readonly host: string; readonly unsure: boolean } => {
  const schemeless = registry.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
  const end = schemeless.search(/[/?#]/)
  const authority = end < 0 ? schemeless : schemeless.slice(0, end)
  return { host: authority.slice(authority.lastIndexOf("@") + 1), unsure: end >= 0 && schemeless.indexOf("@", end) >= 0 }
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * A reason built from the shape of the problem only: the issue's message would quote the value,
 * so only the entry (by its host) and the entry field name (a fixed word) are kept from its path.
 */
const shapeReason = (key: string, json: string, issue: SchemaIssue.Issue): string => {
  const path = (toIssues(issue).issues[0]?.path ?? []).map((s) => (typeof s === "object" ? s.key : s))
  const nested = path.length > 0 && path[0] === "auths" ? 1 : 0
  const registry = path[nested]
  const field = path[nested + 1]
  if (path.length === 0) return isJson(json) ? `${key} is not a JSON object` : `${key} is not JSON`
  if (path.length === nested) return `"auths" in ${key} is not an object`
  const entry = typeof registry === "string" ? entryName(registry) : "an entry"
  if (field !== undefined && entryFieldNames.has(field)) return `${entry} of ${key}: "${String(field)}" is not a string`
  return `${entry} of ${key} is not an object`
}

const fromGo = (value: string | null | undefined): string | undefined => (value === null || value === "" ? undefined : value)

/** `auth` is base64("user:password"); the kubelet splits it at the first colon and lets it win. */
const toCredential = (entry: Entry): Result.Result<RegistryCredential, string> => {
  const auth = fromGo(entry.auth)
  const tokens = {
    identityToken: fromGo(entry.identitytoken) ?? "",
    registryToken: fromGo(entry.registrytoken) ?? ""
  }
  if (auth === undefined) {
    return Result.succeed(registryCredential({ username: fromGo(entry.username) ?? "", password: fromGo(entry.password) ?? "", ...tokens }))
  }
  const decoded = Base64.decodeString(auth)
  const colon = Result.isSuccess(decoded) ? decoded.success.indexOf(":") : -1
  if (Result.isFailure(decoded) || colon < 0) return Result.fail(`"auth" is not base64 of username:password`)
  return Result.succeed(
    registryCredential({
      username: decoded.success.slice(0, colon),
      password: decoded.success.slice(colon + 1),
      ...tokens
    })
  )
}

/**
 * Decodes a pull secret of type `kubernetes.io/dockerconfigjson` (`{"auths": {registry: entry}}`
 * under `.dockerconfigjson`) or `kubernetes.io/dockercfg` (`{registry: entry}` under `.dockercfg`),
 * with the Secret's `data` values base64 as the API server returns them. Entries keep the order
 * of the JSON object. Unusable, with the reason (the controller's PullSecretInvalid condition and
 * the daemon's pull message): data that is not JSON, a docker config without `auths` (a
 * `credsStore` or `credHelpers` of a workstation, which no node has), an `auth` that is not
 * base64 of user:password, an entry whose registry key names no host.
 */
export const parsePullSecret = (secret: SecretLike): Result.Result<ParsedSecret, InvalidPullSecret> => {
  const namespace = secret.metadata?.namespace ?? ""
  const name = secret.metadata?.name ?? ""

  const type = secret.type
  if (type !== secretTypes.dockerConfigJson && type !== secretTypes.dockercfg) {
    // The type is metadata, not content: naming it tells the user what to fix.
    const reason =
      `type ${typeof type === "string" ? quoteBounded(type, 253) : "(none)"} is not ` +
      `${secretTypes.dockerConfigJson} or ${secretTypes.dockercfg}`
    return Result.fail(new InvalidPullSecret({ namespace, name, reason }))
  }
  const key = dataKeys[type]
  const fail = (reason: string) => Result.fail(new InvalidPullSecret({ namespace, name, key, reason }))
  const data = typeof secret.data === "object" && secret.data !== null ? (secret.data as Record<string, unknown>) : {}
  const encoded = data[key]
  if (typeof encoded !== "string" || encoded === "") return fail(`data has no "${key}"`)
  const json = Base64.decodeString(encoded)
  if (Result.isFailure(json)) return fail(`data["${key}"] is not base64`)

  let registries: Readonly<Record<string, Entry>>
  if (type === secretTypes.dockerConfigJson) {
    const config = decodeDockerConfigJson(json.success)
    if (Result.isFailure(config)) return fail(shapeReason(key, json.success, config.failure.issue))
    if (config.success.auths === undefined) return fail(`${key} has no "auths"`)
    registries = config.success.auths
  } else {
    const config = decodeDockercfg(json.success)
    if (Result.isFailure(config)) return fail(shapeReason(key, json.success, config.failure.issue))
    registries = config.success
  }

  const entries: Array<DockerConfigEntry> = []
  for (const [registry, entry] of Object.entries(registries)) {
    if (registryHost(registry).host === "") {
      return fail(
        registry.trim() === "" ? `${key} has an entry with an empty registry key` : `${key} has an entry whose registry key names no host`
      )
    }
    const credential = toCredential(entry)
    if (Result.isFailure(credential)) return fail(`${entryName(registry)} of ${key}: ${credential.failure}`)
    entries.push({ registry, credential: credential.success })
  }
  return Result.succeed(new ParsedSecret({ namespace, name, entries }))
}
