import { Effect, Result } from "effect"
import type { ReferenceObject } from "../api/nodeImage.ts"
import type { RegistryAuth } from "../cri/CriRuntime.ts"
import { credentialsFor, type ParsedSecret, parsePullSecret } from "../cri/credentials.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"

/** The credentials to try for one image, in order, and why some referenced secrets gave none. */
export interface PullCredentials {
  /** Empty: pull anonymously. */
  readonly credentials: ReadonlyArray<RegistryAuth>
  /** One line per unusable secret: names and reasons, never content. */
  readonly problems: ReadonlyArray<string>
}

/**
 * Reads the image's pull secrets (the controller's copies, in the daemon's namespace: the only one
 * it may read, SPEC §2) and picks the credentials for `reference` by the kubelet's rules. Read at
 * each attempt, so a secret fixed meanwhile is used by the next one.
 */
export const pullCredentials = (
  reference: string,
  pullSecrets: ReadonlyArray<ReferenceObject>,
  namespace: string
): Effect.Effect<PullCredentials, never, KubeApi> =>
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
