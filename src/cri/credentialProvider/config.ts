/**
 * The kubelet's CredentialProviderConfig (kubelet.config.k8s.io v1, v1beta1, v1alpha1; YAML or
 * JSON), decoded strictly and validated as the kubelet does it (pkg/credentialprovider/plugin
 * config.go: readCredentialProviderConfig, validateCredentialProviderConfig), so a file the kubelet
 * runs with runs here, and one it refuses is refused with the same reasons, each naming its file,
 * its provider and its field.
 *
 * Never quoted in a problem: `env` values and `args` (they may hold a secret); a name, an
 * apiVersion, a matchImages entry or a duration is configuration and is quoted as the kubelet does.
 */
import { Data, Result, Schema, SchemaIssue } from "effect"
import { parseDocument } from "yaml"
import { parseGoDuration } from "../../api/goDuration.ts"
import { goQuote } from "../../api/goQuote.ts"
import { fieldPath } from "../../api/invalidObject.ts"
import { validateQualifiedName } from "../../api/objectNames.ts"
import { matchImageProblem } from "./matchImageSyntax.ts"

const configGroup = "kubelet.config.k8s.io"
const configVersions: ReadonlyArray<string> = ["v1alpha1", "v1beta1", "v1"].map((v) => `${configGroup}/${v}`)

/** The request and response versions a provider may speak, sorted as the kubelet lists them. */
export const providerApiVersions = [
  "credentialprovider.kubelet.k8s.io/v1",
  "credentialprovider.kubelet.k8s.io/v1alpha1",
  "credentialprovider.kubelet.k8s.io/v1beta1"
] as const
export type ProviderApiVersion = (typeof providerApiVersions)[number]

const serviceAccountTokenCacheTypes: ReadonlyArray<string> = ["ServiceAccount", "Token"]

/** KEP-4412: the service account token a provider wants. preheat pulls for no pod, so it has none to give. */
export interface TokenAttributes {
  readonly serviceAccountTokenAudience: string
  readonly requireServiceAccount: boolean
}

/** One provider: the plugin `name` in the bin directory, run for images matching `matchImages`. */
export interface CredentialProvider {
  readonly name: string
  readonly matchImages: ReadonlyArray<string>
  /** How long an answer without its own cacheDuration is kept; 0: not kept. */
  readonly defaultCacheMillis: number
  readonly apiVersion: ProviderApiVersion
  readonly args: ReadonlyArray<string>
  readonly env: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly tokenAttributes: TokenAttributes | undefined
}

/** The providers of every file, in the kubelet's order (files by name, then as written). */
export interface CredentialProviderConfig {
  readonly providers: ReadonlyArray<CredentialProvider>
}

/** One problem, where it is. */
export interface ConfigProblem {
  readonly file: string
  /** `provider "NAME" (providers[i])`, or undefined for the file as a whole. */
  readonly provider: string | undefined
  /** The field inside the provider (or the file), `matchImages[1]`; empty for the provider or file itself. */
  readonly field: string
  readonly message: string
}

const formatProblem = (problem: ConfigProblem): string =>
  [problem.file, problem.provider, problem.field === "" ? undefined : problem.field, problem.message]
    .filter((part) => part !== undefined)
    .join(": ")

/** The file (or directory) cannot be used: every problem at once, so one edit fixes them. */
export class InvalidCredentialProviderConfig extends Data.TaggedError("InvalidCredentialProviderConfig")<{
  readonly problems: ReadonlyArray<ConfigProblem>
  readonly message: string
}> {
  constructor(problems: ReadonlyArray<ConfigProblem>) {
    super({ problems, message: `invalid credential provider config: ${problems.map(formatProblem).join("; ")}` })
  }
}

// Go's zero values: a field missing or null reads as empty, and validation says what is required.
const optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
const strings = optional(Schema.Array(Schema.NullOr(Schema.String)))

const TokenAttributesFields = Schema.Struct({
  serviceAccountTokenAudience: optional(Schema.String),
  cacheType: optional(Schema.String),
  requireServiceAccount: optional(Schema.Boolean),
  requiredServiceAccountAnnotationKeys: strings,
  optionalServiceAccountAnnotationKeys: strings
})

const ProviderFields = Schema.Struct({
  name: optional(Schema.String),
  matchImages: strings,
  defaultCacheDuration: optional(Schema.String),
  apiVersion: optional(Schema.String),
  args: strings,
  env: optional(Schema.Array(Schema.NullOr(Schema.Struct({ name: optional(Schema.String), value: optional(Schema.String) })))),
  // v1 only: the older versions refuse it as an unknown field (below).
  tokenAttributes: optional(TokenAttributesFields)
})
type ProviderFields = typeof ProviderFields.Type

const ConfigFields = Schema.Struct({
  kind: optional(Schema.String),
  apiVersion: optional(Schema.String),
  providers: optional(Schema.Array(Schema.NullOr(ProviderFields)))
})

// Strict, as the kubelet's codecs (serializer.EnableStrict): an unknown field is an error, not ignored.
const decodeFields = Schema.decodeUnknownResult(ConfigFields, { errors: "all", onExcessProperty: "error" })
const toIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const shapeMessage = (message: string): string => (message === "Expected no excess property" ? "unknown field" : message)

/** A provider's label in problems: its name as written, and where it is. */
const providerLabel = (index: number, name: string | null | undefined): string => `provider ${goQuote(name ?? "")} (providers[${index}])`

interface Located {
  readonly file: string
  readonly index: number
  readonly fields: ProviderFields
}

/** The YAML (or JSON) of one file, or why it is none; positions only, the text is never quoted. */
const parseText = (file: string, text: string): Result.Result<unknown, ReadonlyArray<ConfigProblem>> => {
  // Only an error's code and position are used: its message would quote the text.
  const document = parseDocument(text, { uniqueKeys: true })
  if (document.errors.length > 0) {
    const messages = document.errors.map((error) => {
      const at = error.linePos?.[0]
      return `not YAML or JSON (${error.code}${at === undefined ? "" : ` at line ${at.line}, column ${at.col}`})`
    })
    return Result.fail([...new Set(messages)].map((message) => ({ file, provider: undefined, field: "", message })))
  }
  return Result.succeed(document.toJS())
}

/** One file's providers, with its kind and apiVersion checked and its fields strictly shaped. */
const decodeFile = (file: string, text: string): Result.Result<ReadonlyArray<Located>, ReadonlyArray<ConfigProblem>> => {
  const parsed = parseText(file, text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const fileProblem = (message: string, field = ""): ConfigProblem => ({ file, provider: undefined, field, message })
  const value = parsed.success
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Result.fail([fileProblem("not a CredentialProviderConfig object")])
  }
  const object = value as Record<string, unknown>
  const kind = object["kind"]
  const apiVersion = object["apiVersion"]
  if (typeof apiVersion !== "string" || apiVersion === "") return Result.fail([fileProblem("Required value", "apiVersion")])
  if (typeof kind !== "string" || kind === "") return Result.fail([fileProblem("Required value", "kind")])
  if (!configVersions.includes(apiVersion) || kind !== "CredentialProviderConfig") {
    // The kubelet's scheme knows this one kind in these versions only.
    return Result.fail([fileProblem(`no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)}`)])
  }
  const decoded = decodeFields(value)
  if (Result.isFailure(decoded)) {
    return Result.fail(
      toIssues(decoded.failure.issue).issues.map((issue) => {
        const path = issue.path as ReadonlyArray<PropertyKey>
        const index = path[0] === "providers" && typeof path[1] === "number" ? path[1] : undefined
        if (index === undefined) return fileProblem(shapeMessage(issue.message), fieldPath(path))
        const raw = (object["providers"] as ReadonlyArray<{ readonly name?: unknown }> | undefined)?.[index]?.name
        return {
          file,
          provider: providerLabel(index, typeof raw === "string" ? raw : ""),
          field: fieldPath(path.slice(2)),
          message: shapeMessage(issue.message)
        }
      })
    )
  }
  const providers = decoded.success.providers ?? []
  const problems: Array<ConfigProblem> = []
  const located: Array<Located> = []
  providers.forEach((fields, index) => {
    const provider = fields ?? {}
    if (apiVersion !== `${configGroup}/v1` && provider.tokenAttributes !== undefined) {
      problems.push({ file, provider: providerLabel(index, provider.name), field: "tokenAttributes", message: "unknown field" })
    }
    located.push({ file, index, fields: provider })
  })
  return problems.length > 0 ? Result.fail(problems) : Result.succeed(located)
}

/** validateServiceAccountAnnotationKeys: qualified names (case aside), each once. */
const annotationKeyProblems = (field: string, keys: ReadonlyArray<string | null>): Array<{ field: string; message: string }> => {
  const problems: Array<{ field: string; message: string }> = []
  const seen = new Set<string>()
  for (const key of keys.map((k) => k ?? "")) {
    for (const reason of validateQualifiedName(key.toLowerCase()))
      problems.push({ field, message: `Invalid value: ${goQuote(key)}: ${reason}` })
    if (seen.has(key)) problems.push({ field, message: `Duplicate value: ${goQuote(key)}` })
    seen.add(key)
  }
  return problems
}

/** The kubelet's checks of tokenAttributes (with its feature gate on, as from 1.34). */
const tokenAttributeProblems = (
  fields: NonNullable<ProviderFields["tokenAttributes"]>,
  apiVersion: string
): Array<{ field: string; message: string }> => {
  const at = (field: string) => (field === "" ? "tokenAttributes" : `tokenAttributes.${field}`)
  const problems: Array<{ field: string; message: string }> = []
  if ((fields.serviceAccountTokenAudience ?? "") === "")
    problems.push({ field: at("serviceAccountTokenAudience"), message: "Required value" })
  const requireServiceAccount = fields.requireServiceAccount ?? undefined
  if (requireServiceAccount === undefined) problems.push({ field: at("requireServiceAccount"), message: "Required value" })
  if (apiVersion !== providerApiVersions[0]) {
    problems.push({ field: at(""), message: `Forbidden: tokenAttributes is only supported for ${providerApiVersions[0]} API version` })
  }
  const required = fields.requiredServiceAccountAnnotationKeys ?? []
  const optionalKeys = fields.optionalServiceAccountAnnotationKeys ?? []
  if (requireServiceAccount === false && required.length > 0) {
    problems.push({
      field: at("requiredServiceAccountAnnotationKeys"),
      message: "Forbidden: requireServiceAccount cannot be false when requiredServiceAccountAnnotationKeys is set"
    })
  }
  problems.push(...annotationKeyProblems(at("requiredServiceAccountAnnotationKeys"), required))
  problems.push(...annotationKeyProblems(at("optionalServiceAccountAnnotationKeys"), optionalKeys))
  const both = [...new Set(required.filter((key) => optionalKeys.includes(key)))].sort()
  if (both.length > 0) {
    problems.push({
      field: at(""),
      message: `Invalid value: [${both.map((k) => goQuote(k ?? "")).join(" ")}]: annotation keys cannot be both required and optional`
    })
  }
  const cacheType = fields.cacheType ?? ""
  if (cacheType === "") {
    problems.push({
      field: at("cacheType"),
      message: `Required value: cacheType is required to be set when tokenAttributes is specified. Supported values are: ${serviceAccountTokenCacheTypes.join(", ")}`
    })
  } else if (!serviceAccountTokenCacheTypes.includes(cacheType)) {
    problems.push({
      field: at("cacheType"),
      message: `Unsupported value: ${goQuote(cacheType)}: supported values: ${serviceAccountTokenCacheTypes.map((t) => `"${t}"`).join(", ")}`
    })
  }
  return problems
}

/** validateCredentialProviderConfig for one provider, plus the duration's syntax (Go's decoder checks that first). */
const providerProblems = (fields: ProviderFields, seen: ReadonlySet<string>): Array<{ field: string; message: string }> => {
  const problems: Array<{ field: string; message: string }> = []
  const name = fields.name ?? ""
  // The kubelet lets an empty name through and then fails to find its binary; say it at once.
  if (name === "") problems.push({ field: "name", message: "Required value" })
  if (name.includes("/")) problems.push({ field: "name", message: `Invalid value: ${goQuote(name)}: provider name cannot contain '/'` })
  if (name.includes(" ")) problems.push({ field: "name", message: `Invalid value: ${goQuote(name)}: provider name cannot contain spaces` })
  if (name === "." || name === "..") {
    problems.push({ field: "name", message: `Invalid value: ${goQuote(name)}: provider name cannot be '${name}'` })
  }
  if (seen.has(name)) problems.push({ field: "name", message: `Duplicate value: ${goQuote(name)}` })
  const apiVersion = fields.apiVersion ?? ""
  if (apiVersion === "") problems.push({ field: "apiVersion", message: "Required value" })
  else if (!(providerApiVersions as ReadonlyArray<string>).includes(apiVersion)) {
    problems.push({
      field: "apiVersion",
      message: `Unsupported value: ${goQuote(apiVersion)}: supported values: ${providerApiVersions.map((v) => `"${v}"`).join(", ")}`
    })
  }
  const matchImages = fields.matchImages ?? []
  if (matchImages.length === 0)
    problems.push({ field: "matchImages", message: "Required value: at least 1 item in matchImages is required" })
  matchImages.forEach((pattern, i) => {
    const problem = matchImageProblem(pattern ?? "")
    if (problem !== undefined) {
      problems.push({ field: `matchImages[${i}]`, message: `Invalid value: ${goQuote(pattern ?? "")}: match image is invalid: ${problem}` })
    }
  })
  const duration = fields.defaultCacheDuration ?? undefined
  if (duration === undefined) problems.push({ field: "defaultCacheDuration", message: "Required value" })
  else {
    const millis = parseGoDuration(duration)
    if (millis === undefined) {
      problems.push({
        field: "defaultCacheDuration",
        message: `Invalid value: ${goQuote(duration)}: time: invalid duration ${goQuote(duration)}`
      })
    } else if (millis < 0) {
      problems.push({
        field: "defaultCacheDuration",
        message: `Invalid value: ${goQuote(duration)}: defaultCacheDuration must be greater than or equal to 0`
      })
    }
  }
  if (fields.tokenAttributes !== undefined && fields.tokenAttributes !== null) {
    problems.push(...tokenAttributeProblems(fields.tokenAttributes, apiVersion))
  }
  return problems
}

const toProvider = (fields: ProviderFields): CredentialProvider => {
  const token = fields.tokenAttributes ?? undefined
  return {
    name: fields.name ?? "",
    matchImages: (fields.matchImages ?? []).map((p) => p ?? ""),
    defaultCacheMillis: parseGoDuration(fields.defaultCacheDuration ?? "0") ?? 0,
    apiVersion: fields.apiVersion as ProviderApiVersion,
    args: (fields.args ?? []).map((a) => a ?? ""),
    env: (fields.env ?? []).map((e) => ({ name: e?.name ?? "", value: e?.value ?? "" })),
    tokenAttributes:
      token === undefined
        ? undefined
        : {
            serviceAccountTokenAudience: token.serviceAccountTokenAudience ?? "",
            requireServiceAccount: token.requireServiceAccount ?? false
          }
  }
}

/** One file of the config as read: its path (as problems name it) and its text. */
export interface ConfigFile {
  readonly path: string
  readonly text: string
}

/**
 * The config from its files (one, or a directory's `*.json`, `*.yaml`, `*.yml` in name order, as
 * the kubelet reads a directory), merged and validated; every problem of every file at once.
 */
export const decodeCredentialProviderConfig = (
  files: ReadonlyArray<ConfigFile>
): Result.Result<CredentialProviderConfig, InvalidCredentialProviderConfig> => {
  const problems: Array<ConfigProblem> = []
  const located: Array<Located> = []
  for (const file of files) {
    const decoded = decodeFile(file.path, file.text)
    if (Result.isFailure(decoded)) problems.push(...decoded.failure)
    else located.push(...decoded.success)
  }
  if (problems.length > 0) return Result.fail(new InvalidCredentialProviderConfig(problems))
  if (located.length === 0) {
    const where = files.map((f) => f.path).join(", ")
    return Result.fail(
      new InvalidCredentialProviderConfig([
        { file: where, provider: undefined, field: "providers", message: "Required value: at least 1 item in plugins is required" }
      ])
    )
  }
  const seen = new Set<string>()
  for (const { file, index, fields } of located) {
    const provider = providerLabel(index, fields.name)
    for (const problem of providerProblems(fields, seen)) problems.push({ file, provider, ...problem })
    seen.add(fields.name ?? "")
  }
  if (problems.length > 0) return Result.fail(new InvalidCredentialProviderConfig(problems))
  return Result.succeed({ providers: located.map(({ fields }) => toProvider(fields)) })
}
