// A tag that failed because the registry refused a credential provider's credentials (or a
// provider failed for it) is pulled again by nobody: the daemon pulls each version of a tag once,
// and the controller decides new versions. So the daemon asks the providers again on its own,
// as their answers expire, and marks the failed tag once one answers otherwise (its status's
// `credentialProviders[].renewedAt`); the controller then gives a job's tag its next version.
// Pure decisions here, on Clock milliseconds; the asking is watch.ts's.
import type { ImageTagStatus, TagCredentialProvider } from "../../api/nodeImage.ts"
import { rfc3339 } from "../../api/time.ts"
import { samePrint } from "../../cri/credentialProvider/answerPrint.ts"
import type { ProviderAnswer } from "../../cri/credentialProvider/CredentialProviders.ts"
import type { PullError } from "../attemptPolicy.ts"

/** How often the providers of a failed tag are asked again. */
export interface RenewalPace {
  /** Never sooner after the last question, whatever the answer's expiry (per image). */
  readonly minIntervalMillis: number
  /** For an answer that is not kept (a cacheDuration of 0, or a failure): the kubelet would ask at each pull. */
  readonly uncachedIntervalMillis: number
}

export const renewalPace: RenewalPace = { minIntervalMillis: 60_000, uncachedIntervalMillis: 300_000 }

/**
 * The providers to watch after a pull failed: those asked at its last attempt, when the registry
 * refused the credentials tried (theirs, or none when they gave none) or one of them failed. None
 * for any other failure: new credentials would change nothing.
 */
export const refusedAnswers = (
  failure: PullError | undefined,
  providerFailed: boolean,
  answers: ReadonlyArray<ProviderAnswer>
): ReadonlyArray<ProviderAnswer> => (failure?._tag === "Unauthorized" || providerFailed ? answers : [])

/** The failed status naming the providers watched (never what they answered). */
export const withProvidersAsked = (status: ImageTagStatus, answers: ReadonlyArray<ProviderAnswer>): ImageTagStatus =>
  answers.length === 0 ? status : { ...status, credentialProviders: answers.map((a): TagCredentialProvider => ({ name: a.provider })) }

/** The failed status with `renewedAt` on the providers that answer anew. */
export const withRenewal = (status: ImageTagStatus, providers: ReadonlyArray<string>, at: number): ImageTagStatus => ({
  ...status,
  credentialProviders: (status.credentialProviders ?? []).map((p) =>
    providers.includes(p.name) && p.renewedAt === undefined ? { ...p, renewedAt: rfc3339(at) } : p
  )
})

/**
 * When to ask again, having asked at `askedAt` and heard `answers`: once the first kept answer
 * expires (the provider's cache would run its plugin then anyway), at most every
 * `uncachedIntervalMillis` for one that is not kept, never sooner than `minIntervalMillis`.
 */
export const nextAskAt = (answers: ReadonlyArray<ProviderAnswer>, askedAt: number, pace: RenewalPace = renewalPace): number => {
  const uncached = askedAt + pace.uncachedIntervalMillis
  // An entry is used while the clock is at or before its expiry (answerCache.ts isFresh): one past it runs the plugin.
  const next = answers.length === 0 ? uncached : Math.min(...answers.map((a) => (a.expiresAt === undefined ? uncached : a.expiresAt + 1)))
  return Math.max(next, askedAt + pace.minIntervalMillis)
}

/**
 * The providers among those refused that answer otherwise now. A failure is no new answer (a
 * pull would fail again), but an answer after a failure is; a provider no longer asked says nothing.
 */
export const renewedProviders = (refused: ReadonlyArray<ProviderAnswer>, now: ReadonlyArray<ProviderAnswer>): ReadonlyArray<string> =>
  refused.flatMap(({ print: before, provider }) => {
    const after = now.find((a) => a.provider === provider)?.print
    if (after === undefined) return []
    return before === undefined || !samePrint(before, after) ? [provider] : []
  })

/**
 * The providers to watch for a tag this daemon did not fail itself (it failed before the daemon
 * started): those its Failed status names, while none of them is marked renewed yet.
 */
export const providersOfStoredFailure = (status: ImageTagStatus | undefined, version: number): ReadonlyArray<string> => {
  if (status?.phase !== "Failed" || (status.version ?? 0) !== version) return []
  const asked = status.credentialProviders ?? []
  return asked.some((p) => p.renewedAt !== undefined) ? [] : asked.map((p) => p.name)
}
