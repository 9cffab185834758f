/**
 * The CredentialProviderRequest a plugin reads on stdin, and the CredentialProviderResponse it
 * prints, checked as the kubelet checks it (pkg/credentialprovider/plugin plugin.go ExecPlugin,
 * decodeResponse; strict decoding). A problem is described without quoting anything the plugin
 * printed: its output holds credentials.
 */
import { Result, Schema } from "effect"
import { parseGoDuration } from "../../api/goDuration.ts"
import { registryCredential, type RegistryCredential } from "../dockerConfig.ts"
import { type ProviderApiVersion, providerApiVersions } from "./config.ts"

/** The request's JSON, as the kubelet's encoder writes it (a trailing newline included). */
export const encodeRequest = (apiVersion: ProviderApiVersion, image: string): string =>
  `${JSON.stringify({ kind: "CredentialProviderRequest", apiVersion, image })}\n`

/** How the answer is kept: per image, per registry (host and port), or for every image the provider matches. */
export type CacheKeyType = "Image" | "Registry" | "Global"

export interface ProviderResponse {
  readonly cacheKeyType: CacheKeyType
  /** undefined: the provider's defaultCacheDuration; 0: not kept. */
  readonly cacheMillis: number | undefined
  /** The credentials by registry key (`*.registry.io`, `registry.io:8080/path`), in the order printed. */
  readonly auth: ReadonlyArray<{ readonly key: string; readonly credential: RegistryCredential }>
}

const optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

const AuthConfig = Schema.Struct({ username: optional(Schema.String), password: optional(Schema.String) })

const Response = Schema.Struct({
  kind: Schema.String,
  apiVersion: Schema.String,
  cacheKeyType: optional(Schema.String),
  cacheDuration: optional(Schema.String),
  // v1 only (KEP-4412); preheat sends no service account token, so it is read and not used.
  serviceAccountTokenCacheType: optional(Schema.String),
  auth: optional(Schema.Record(Schema.String, Schema.NullOr(AuthConfig)))
})

const decodeShape = Schema.decodeUnknownResult(Response, { onExcessProperty: "error" })

const cacheKeyTypes: ReadonlyArray<string> = ["Image", "Registry", "Global"]

/** The answer in `stdout`, or what is wrong with it in words that quote none of it. */
export const decodeResponse = (stdout: string, apiVersion: ProviderApiVersion): Result.Result<ProviderResponse, string> => {
  let printed: unknown
  try {
    printed = JSON.parse(stdout)
  } catch {
    return Result.fail("printed something that is not JSON")
  }
  if (typeof printed !== "object" || printed === null || Array.isArray(printed)) return Result.fail("printed JSON that is not an object")
  const object = printed as Record<string, unknown>
  const version = object["apiVersion"]
  if (version !== apiVersion) {
    // Only a version the kubelet knows is repeated: anything else the plugin printed stays unsaid.
    const said = (providerApiVersions as ReadonlyArray<unknown>).includes(version) ? `apiVersion ${String(version)}` : "another apiVersion"
    return Result.fail(`answered with ${said} where the config asks for ${apiVersion}`)
  }
  if (object["kind"] !== "CredentialProviderResponse") return Result.fail("printed JSON that is not a CredentialProviderResponse")
  if (apiVersion !== providerApiVersions[0] && "serviceAccountTokenCacheType" in object) {
    return Result.fail("printed a CredentialProviderResponse with an unknown field")
  }
  const shaped = decodeShape(printed)
  if (Result.isFailure(shaped))
    return Result.fail("printed a CredentialProviderResponse that does not decode (an unknown field, or a value of the wrong type)")
  const response = shaped.success
  const cacheKeyType = response.cacheKeyType ?? ""
  if (!cacheKeyTypes.includes(cacheKeyType)) return Result.fail("did not return a valid cacheKeyType (Image, Registry or Global)")
  let cacheMillis: number | undefined
  if (response.cacheDuration !== undefined && response.cacheDuration !== null) {
    cacheMillis = parseGoDuration(response.cacheDuration)
    if (cacheMillis === undefined) return Result.fail("returned a cacheDuration that is not a duration")
  }
  const auth = Object.entries(response.auth ?? {}).map(([key, entry]) => ({
    key,
    credential: registryCredential({ username: entry?.username ?? "", password: entry?.password ?? "" })
  }))
  return Result.succeed({ cacheKeyType: cacheKeyType as CacheKeyType, cacheMillis, auth })
}
