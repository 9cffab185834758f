/**
 * The kubelet's image credential provider plugins (KEP-2133), as the daemon's source of registry
 * credentials beside pull secrets. For each image, every provider whose `matchImages` matches is
 * asked (its cached answer, else one run of its plugin), and the credentials of all answers are
 * ordered by the kubelet's keyring rules (src/cri/credentials.ts). As in the kubelet
 * (pkg/credentialprovider/plugin plugin.go):
 *
 * - an answer is kept by its `cacheKeyType` (the image's repository, its registry, or every image)
 *   for its `cacheDuration`, else the provider's `defaultCacheDuration`; 0 keeps nothing; a
 *   lookup tries the image's key, then the registry's, then the global one;
 * - runs asked for the same repository at once share one process (single flight);
 * - a run is bounded (the kubelet allows 1 minute), then its process group is killed;
 * - a provider that fails gives no credentials for that image, and the others still answer.
 *
 * Unlike the kubelet, a failure is not only logged: it is named (provider and image, never the
 * plugin's output) in what the daemon says of a pull that then fails, and counted in
 * `preheat_credential_provider_runs_total{provider,result}`.
 *
 * Service account tokens (KEP-4412, `tokenAttributes`): preheat pulls for no pod, so it has no
 * service account to bind a token to. A provider with `requireServiceAccount: true` is never run
 * (the kubelet, too, skips it for a pod without a service account) and a pull it would have
 * served names it; with `requireServiceAccount: false` it is run without a token, as the kubelet
 * runs it for such a pod.
 */
import { Clock, Context, Data, Deferred, Duration, Effect, Exit, Option, Result } from "effect"
import type { Scope } from "effect"
import { quoteBounded } from "../../api/goQuote.ts"
import { Metrics, type ProviderRunResult } from "../../ops/metrics.ts"
import { distinctCredentials, keyringLookup, matchesRepository, repositoryOf, type SourcedCredential } from "../credentials.ts"
import { type AnswerPrint, printOf } from "./answerPrint.ts"
import { cacheKeyOf, expiryOf, isFresh, lookupKeys } from "./answerCache.ts"
import type { CredentialProvider, CredentialProviderConfig } from "./config.ts"
import { PluginRunner } from "./PluginRunner.ts"
import { decodeResponse, encodeRequest, type ProviderResponse } from "./response.ts"

/** A provider gave no answer for an image: which, for what, and why (never what its plugin printed). */
class CredentialProviderFailed extends Data.TaggedError("CredentialProviderFailed")<{
  readonly provider: string
  readonly repository: string
  readonly result: Exclude<ProviderRunResult, "succeeded">
  readonly reason: string
}> {
  override get message(): string {
    return `credential provider ${quoteBounded(this.provider)} failed for image ${quoteBounded(this.repository)}: ${this.reason}`
  }
}

/**
 * What one provider asked for an image said, as the daemon remembers a refused answer to tell a
 * new one from it (daemon/providerRenewal/): never the credentials.
 */
export interface ProviderAnswer {
  readonly provider: string
  /** The digest of the credentials it gave for the image (none matching counts as an answer too); undefined: it failed. */
  readonly print: AnswerPrint | undefined
  /** When its kept answer expires (Clock milliseconds); undefined when it is not kept (a cacheDuration of 0, or a failure). */
  readonly expiresAt: number | undefined
}

/** What the providers said for one image. */
export interface ProviderLookup {
  /** Every matching credential of every answer, in the kubelet's keyring order. */
  readonly credentials: ReadonlyArray<SourcedCredential>
  /** The providers that matched and failed, were skipped, or answered nothing for this image, in words. */
  readonly problems: ReadonlyArray<string>
  /** Whether one of them failed (a run that ended without an answer). */
  readonly failed: boolean
  /** Each provider asked (matched and not skipped), in config order. */
  readonly answers: ReadonlyArray<ProviderAnswer>
}

const noProviders: ProviderLookup = { credentials: [], problems: [], failed: false, answers: [] }

/** How a failed pull names a provider among the sources it tried. */
const providerSource = (name: string): string => `credential provider ${name}`

export interface CredentialProvidersOptions {
  /** How long one run may take before it is stopped: the kubelet allows 1 minute. */
  readonly runTimeout: Duration.Input
}

export const defaultRunTimeout = Duration.minutes(1)

/**
 * The credential providers of `--image-credential-provider-config`. The daemon works without
 * this service (no config: pull secrets only, as before).
 */
export class CredentialProviders extends Context.Service<
  CredentialProviders,
  {
    /** The providers' credentials for `image` (a reference), asking each matching provider. */
    readonly lookup: (image: string) => Effect.Effect<ProviderLookup>
  }
>()("preheat/cri/credentialProvider/CredentialProviders") {}

type Answer =
  | { readonly _tag: "Answered"; readonly response: ProviderResponse; readonly expiresAt: number | undefined }
  | { readonly _tag: "Skipped"; readonly reason: string }
  | { readonly _tag: "NotMatched" }

interface Kept {
  readonly response: ProviderResponse
  readonly expiresAt: number
}

/** A run's answer, and when it expires if it is kept. */
interface Fresh {
  readonly response: ProviderResponse
  readonly expiresAt: number | undefined
}

/** One provider: its kept answers and its runs under way, for the life of the daemon. */
const makeProvider = Effect.fnUntraced(function* (provider: CredentialProvider, timeout: Duration.Duration) {
  const runner = yield* PluginRunner
  const metrics = yield* Metrics
  const scope = yield* Effect.scope
  const kept = new Map<string, Kept>()
  const flights = new Map<string, Deferred.Deferred<Fresh, CredentialProviderFailed>>()

  const failure = (repository: string, result: CredentialProviderFailed["result"], reason: string) =>
    new CredentialProviderFailed({ provider: provider.name, repository, result, reason })

  /** One run for `repository`: the decoded answer, kept as it asks; counted whatever its end. */
  const run = (repository: string): Effect.Effect<Fresh, CredentialProviderFailed> =>
    runner.run({ name: provider.name, args: provider.args, env: provider.env, stdin: encodeRequest(provider.apiVersion, repository) }).pipe(
      Effect.mapError((error) => failure(repository, error.reason, error.message)),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(failure(repository, "timeout", `its plugin gave no answer within ${Duration.format(timeout)} and was stopped`))
      }),
      Effect.flatMap((stdout) =>
        Result.match(decodeResponse(stdout, provider.apiVersion), {
          onFailure: (problem) => Effect.fail(failure(repository, "invalid_response", `its plugin ${problem}`)),
          onSuccess: Effect.succeed
        })
      ),
      Effect.flatMap((response) =>
        Effect.clockWith((clock) =>
          Effect.sync((): Fresh => {
            const now = clock.currentTimeMillisUnsafe()
            const expiresAt = expiryOf(response, provider.defaultCacheMillis, now)
            if (expiresAt !== undefined) kept.set(cacheKeyOf(response.cacheKeyType, repository), { response, expiresAt })
            return { response, expiresAt }
          })
        )
      ),
      Effect.tapError((error) =>
        Effect.logWarning("credential provider gave no credentials").pipe(
          Effect.annotateLogs({ provider: provider.name, image: repository, failure: error.reason })
        )
      ),
      Effect.onExit((exit) => {
        const result = runResult(exit)
        return result === undefined ? Effect.void : metrics.recordCredentialProviderRun(provider.name, result)
      }),
      Effect.withSpan("CredentialProvider.run", { attributes: { provider: provider.name, image: repository } })
    )

  /** The run under way for `repository`, or a new one in the daemon's scope (a caller giving up leaves it to the others). */
  const shared = (repository: string): Effect.Effect<Fresh, CredentialProviderFailed> =>
    Effect.suspend(() => {
      const running = flights.get(repository)
      if (running !== undefined) return Deferred.await(running)
      const result = Deferred.makeUnsafe<Fresh, CredentialProviderFailed>()
      flights.set(repository, result)
      const flight = run(repository).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            flights.delete(repository)
            Deferred.doneUnsafe(result, exit)
          })
        )
      )
      return Effect.andThen(Effect.forkIn(flight, scope), Deferred.await(result))
    })

  const answer = (repository: string): Effect.Effect<Answer, CredentialProviderFailed> =>
    Effect.gen(function* () {
      if (!provider.matchImages.some((pattern) => matchesRepository(pattern, repository))) return { _tag: "NotMatched" } as const
      if (provider.tokenAttributes?.requireServiceAccount === true) {
        return {
          _tag: "Skipped",
          reason: "it requires a pod's service account (tokenAttributes.requireServiceAccount) and preheat pulls for no pod"
        } as const
      }
      const now = yield* Clock.currentTimeMillis
      for (const [key, entry] of kept) if (!isFresh(entry.expiresAt, now)) kept.delete(key)
      for (const key of lookupKeys(repository)) {
        const entry = kept.get(key)
        if (entry !== undefined) return { _tag: "Answered", response: entry.response, expiresAt: entry.expiresAt } as const
      }
      return { _tag: "Answered", ...(yield* shared(repository)) } as const
    })

  return { name: provider.name, answer }
})

/** How a run ended; undefined for one interrupted (the daemon stopping), which is no result of the plugin's. */
const runResult = (exit: Exit.Exit<unknown, CredentialProviderFailed>): ProviderRunResult | undefined => {
  if (Exit.isSuccess(exit)) return "succeeded"
  const error = Exit.findErrorOption(exit)
  return Option.isSome(error) ? error.value.result : undefined
}

/** The providers of `config`, each with its own cache and runs, living as long as the scope. */
export const makeCredentialProviders = Effect.fnUntraced(function* (
  config: CredentialProviderConfig,
  options: CredentialProvidersOptions
): Effect.fn.Return<CredentialProviders["Service"], never, PluginRunner | Metrics | Scope.Scope> {
  const runner = yield* PluginRunner
  const timeout = Duration.fromInputUnsafe(options.runTimeout)
  const providers = yield* Effect.forEach(config.providers, (provider) => makeProvider(provider, timeout))
  for (const provider of config.providers) {
    if (!(yield* runner.exists(provider.name))) {
      yield* Effect.logWarning("credential provider plugin not found; images it matches are pulled without its credentials").pipe(
        Effect.annotateLogs({ provider: provider.name })
      )
    }
    if (provider.tokenAttributes?.requireServiceAccount === true) {
      yield* Effect.logWarning(
        "credential provider requires a pod's service account (tokenAttributes.requireServiceAccount); preheat pulls for no pod and never runs it"
      ).pipe(Effect.annotateLogs({ provider: provider.name }))
    }
  }

  const lookup = (image: string): Effect.Effect<ProviderLookup> =>
    Effect.gen(function* () {
      const repository = repositoryOf(image)
      if (repository === undefined) return noProviders
      const entries: Array<{ readonly key: string; readonly value: SourcedCredential }> = []
      const problems: Array<string> = []
      const answers: Array<ProviderAnswer> = []
      let failed = false
      for (const provider of providers) {
        const answer = yield* Effect.result(provider.answer(repository))
        if (Result.isFailure(answer)) {
          failed = true
          problems.push(answer.failure.message)
          answers.push({ provider: provider.name, print: undefined, expiresAt: undefined })
          continue
        }
        const said = answer.success
        if (said._tag === "Skipped") {
          problems.push(
            `credential provider ${quoteBounded(provider.name)} was not asked for image ${quoteBounded(repository)}: ${said.reason}`
          )
        } else if (said._tag === "Answered") {
          const matching = keyringLookup(
            repository,
            said.response.auth.map(({ key, credential }) => ({ key, value: credential }))
          )
          answers.push({ provider: provider.name, print: printOf(matching), expiresAt: said.expiresAt })
          if (matching.length === 0) {
            problems.push(
              `credential provider ${quoteBounded(provider.name)} answered with no credentials for image ${quoteBounded(repository)}`
            )
          }
          for (const { key, credential } of said.response.auth) {
            entries.push({ key, value: { credential, source: providerSource(provider.name) } })
          }
        }
      }
      return { credentials: distinctCredentials(keyringLookup(repository, entries)), problems, failed, answers }
    })

  return CredentialProviders.of({ lookup })
})
