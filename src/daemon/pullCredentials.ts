import { Effect, Result } from "effect"
import type { ReferenceObject } from "../api/nodeImage.ts"
import type { CredentialProviders, ProviderAnswer } from "../cri/credentialProvider/CredentialProviders.ts"
import { credentialsFor, distinctCredentials, type ParsedSecret, parsePullSecret, type SourcedCredential } from "../cri/credentials.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"

/** The credentials to try for one image, in order, and why some sources gave none. */
export interface PullCredentials {
  /** Empty: pull anonymously. */
  readonly credentials: ReadonlyArray<SourcedCredential>
  /** One line per unusable secret or provider without an answer: names and reasons, never content. */
  readonly problems: ReadonlyArray<string>
  /** A credential provider failed for the image (its run ended without an answer). */
  readonly providerFailed: boolean
  /** What each credential provider asked for the image said (in memory only: daemon/providerRenewal/). */
  readonly providerAnswers: ReadonlyArray<ProviderAnswer>
}

/**
 * The credentials for `reference` in the kubelet's order (its keyring is the pull secrets', then
 * the providers'; OpenKruise's daemon asks the same keyring): first the image's pull secrets (the
 * controller's copies, in the daemon's namespace: the only one it may read, SPEC §2), then the
 * credential providers' answers, each part by the kubelet's keyring rules. Asked at each attempt,
 * before the pull, so a secret fixed or a provider's answer renewed meanwhile is used by the next.
 */
export const pullCredentials = (
  reference: string,
  pullSecrets: ReadonlyArray<ReferenceObject>,
  namespace: string,
  providers: CredentialProviders["Service"] | undefined
): Effect.Effect<PullCredentials, never, KubeApi> =>
  Effect.gen(function* () {
    const secrets = yield* secretCredentials(reference, pullSecrets, namespace)
    if (providers === undefined) return { ...secrets, providerFailed: false, providerAnswers: [] }
    const provided = yield* providers.lookup(reference)
    return {
      credentials: distinctCredentials([...secrets.credentials, ...provided.credentials]),
      problems: [...secrets.problems, ...provided.problems],
      providerFailed: provided.failed,
      providerAnswers: provided.answers
    }
  })

/** The pull secrets' part; read at each attempt. */
const secretCredentials = (
  reference: string,
  pullSecrets: ReadonlyArray<ReferenceObject>,
  namespace: string
): Effect.Effect<Omit<PullCredentials, "providerFailed" | "providerAnswers">, never, KubeApi> =>
  Effect.gen(function* () {
    if (pullSecrets.length === 0) return { credentials: [], problems: [] }
    const api = yield* KubeApi
    const parsed: Array<ParsedSecret> = []
    const problems: Array<string> = []
    for (const ref of pullSecrets) {
      const name = `${ref.namespace ?? ""}/${ref.name ?? ""}`
      if (ref.name === undefined || ref.name === "") {
        problems.push(`pull secret ${name} has no name`)
        continue
      }
      if (ref.namespace !== namespace) {
        problems.push(`pull secret ${name} is outside the daemon's namespace ${namespace}`)
        continue
      }
      const secret = yield* Effect.result(api.get(resources.secret, { namespace, name: ref.name }))
      if (Result.isFailure(secret)) {
        const error = secret.failure
        problems.push(
          error._tag === "NotFound"
            ? `pull secret ${name} not found`
            : // The message says what to fix: the RBAC rule a 403 lacks, the 401, or why the server was not reached.
              `pull secret ${name} could not be read: ${error.message === "" ? error._tag : error.message}`
        )
        continue
      }
      const decoded = parsePullSecret(secret.success)
      if (Result.isFailure(decoded)) problems.push(decoded.failure.message)
      else parsed.push(decoded.success)
    }
    return { credentials: credentialsFor(reference, parsed), problems }
  })
