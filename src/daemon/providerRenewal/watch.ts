import { Clock, Duration, Effect, FiberMap } from "effect"
import type { Scope } from "effect"
import type { CredentialProviders, ProviderAnswer } from "../../cri/credentialProvider/CredentialProviders.ts"
import { repositoryOf } from "../../cri/credentials.ts"
import { nextAskAt, type RenewalPace, renewalPace, renewedProviders } from "./decide.ts"

/** A failed tag whose credential providers are asked again. */
export interface WatchedTag {
  /** The tag (tagTask.ts tagKey). */
  readonly key: string
  /** What a pull of it asks the providers for. */
  readonly reference: string
  /** The providers to watch, by name. */
  readonly providers: ReadonlyArray<string>
  /**
   * What they said at the failed attempt; undefined when that is not known (the tag failed before
   * this daemon started): the first answer is then the one a later answer is compared with.
   */
  readonly refused: ReadonlyArray<ProviderAnswer> | undefined
  /** Called once, with the providers that answer anew and when that was seen. */
  readonly renewed: (providers: ReadonlyArray<string>, at: number) => Effect.Effect<void>
}

export interface ProviderRenewal {
  /** Asks the tag's providers again until one answers anew (a tag watched already is replaced). */
  readonly watch: (tag: WatchedTag) => Effect.Effect<void>
  /** The tag left the spec, got a new version, or this daemon pulls it again: no longer watched. */
  readonly forget: (key: string) => Effect.Effect<void>
}

interface Watched {
  readonly tag: WatchedTag
  refused: ReadonlyArray<ProviderAnswer> | undefined
}

/** The failed tags of one repository: asked together, as the providers are asked per repository. */
interface Repository {
  readonly tags: Map<string, Watched>
  /** The last answers heard, and when: the next question waits for them to expire. */
  answers: ReadonlyArray<ProviderAnswer>
  askedAt: number
}

/**
 * Asks the credential providers of failed tags again (decide.ts): one fiber per repository with
 * failed tags, sleeping until the answers it last heard expire (at least a minute, at most 5
 * minutes for answers that are not kept), then one lookup through the providers' cache and single
 * flight, as a pull's. What was refused is compared in memory; a tag whose providers answer anew
 * is handed back once, and no longer watched. Nothing is written while nothing changes.
 */
export const makeProviderRenewal = Effect.fnUntraced(function* (
  providers: CredentialProviders["Service"],
  pace: RenewalPace = renewalPace
): Effect.fn.Return<ProviderRenewal, never, Scope.Scope> {
  const fibers = yield* FiberMap.make<string>()
  const repositories = new Map<string, Repository>()
  /** The repository of each watched tag. */
  const repositoryOfTag = new Map<string, string>()

  /** One question for the repository's failed tags, and what it means for each. */
  const ask = Effect.fn("ProviderRenewal.ask")(function* (name: string, repository: Repository, reference: string) {
    yield* Effect.annotateCurrentSpan({ repository: name, tags: repository.tags.size })
    const { answers } = yield* providers.lookup(reference)
    const at = yield* Clock.currentTimeMillis
    repository.answers = answers
    repository.askedAt = at
    for (const [key, watched] of [...repository.tags]) {
      if (watched.refused === undefined) {
        watched.refused = answers.filter((a) => watched.tag.providers.includes(a.provider))
        continue
      }
      const renewed = renewedProviders(watched.refused, answers)
      if (renewed.length === 0) continue
      repository.tags.delete(key)
      repositoryOfTag.delete(key)
      yield* Effect.logInfo("credential provider answers anew; the failed tag is marked for another pull").pipe(
        Effect.annotateLogs({ image: watched.tag.reference, providers: renewed.join(",") })
      )
      yield* watched.tag.renewed(renewed, at)
    }
  })

  /** The repository's questions, each once the answers it last heard expire, while it has failed tags. */
  const follow = (name: string, repository: Repository): Effect.Effect<void> =>
    Effect.gen(function* () {
      while (repository.tags.size > 0) {
        const now = yield* Clock.currentTimeMillis
        const baseline = [...repository.tags.values()].some((w) => w.refused === undefined)
        const due = baseline ? now : nextAskAt(repository.answers, repository.askedAt, pace)
        if (due > now) yield* Effect.sleep(Duration.millis(due - now))
        const first = repository.tags.values().next()
        if (first.done === true) break
        yield* ask(name, repository, first.value.tag.reference)
      }
      if (repositories.get(name) === repository) repositories.delete(name)
    })

  const forget = (key: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const name = repositoryOfTag.get(key)
      if (name === undefined) return Effect.void
      repositoryOfTag.delete(key)
      const repository = repositories.get(name)
      if (repository === undefined) return Effect.void
      repository.tags.delete(key)
      if (repository.tags.size > 0) return Effect.void
      repositories.delete(name)
      return FiberMap.remove(fibers, name)
    })

  const watch = (tag: WatchedTag): Effect.Effect<void> =>
    Effect.gen(function* () {
      yield* forget(tag.key)
      const name = repositoryOf(tag.reference)
      if (name === undefined || tag.providers.length === 0) return
      repositoryOfTag.set(tag.key, name)
      const watched: Watched = { tag, refused: tag.refused }
      const existing = repositories.get(name)
      if (existing !== undefined) {
        existing.tags.set(tag.key, watched)
        return
      }
      const repository: Repository = {
        tags: new Map([[tag.key, watched]]),
        answers: tag.refused ?? [],
        askedAt: yield* Clock.currentTimeMillis
      }
      repositories.set(name, repository)
      yield* FiberMap.run(fibers, name, follow(name, repository))
    })

  return { watch, forget }
})
