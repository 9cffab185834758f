// The credential an exec plugin gave, kept as client-go keeps it: until its expirationTimestamp
// (expired once the clock is past it), or, without one, until the server refuses it. Unlike
// client-node, requests finding it missing or expired at the same moment wait for ONE run of the
// plugin, and a burst of 401 answers to one credential replaces it once.
import { Deferred, Effect, Exit } from "effect"
import type { Scope } from "effect"

/** A credential and when it stops being valid (epoch milliseconds; undefined: until refused). */
export interface Expiring<A> {
  readonly value: A
  readonly expiresAt: number | undefined
}

export interface CredentialCache<A, E> {
  /** The credential held while it is valid; else the result of one refresh, shared by all who ask meanwhile. */
  readonly get: Effect.Effect<A, E>
  /** The server refused `seen`: the next `get` refreshes, unless `seen` was already replaced. */
  readonly invalidate: (seen: A) => Effect.Effect<void>
}

type State<A, E> =
  | { readonly _tag: "Empty" }
  | { readonly _tag: "Held"; readonly credential: Expiring<A> }
  | { readonly _tag: "Refreshing"; readonly result: Deferred.Deferred<A, E> }

/** Valid while the clock has not passed its expiry (client-go: `now.After(exp)` is expired). */
const isValid = (credential: Expiring<unknown>, now: number): boolean => credential.expiresAt === undefined || now <= credential.expiresAt

/**
 * A cache over `refresh`. Refreshes run in `scope`'s lifetime rather than the asking request's, so
 * one request giving up does not fail the others waiting for the same run.
 */
export const makeCredentialCache = <A, E>(
  refresh: Effect.Effect<Expiring<A>, E>
): Effect.Effect<CredentialCache<A, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    let state: State<A, E> = { _tag: "Empty" }

    const startRefresh = Effect.suspend(() => {
      const result = Deferred.makeUnsafe<A, E>()
      state = { _tag: "Refreshing", result }
      const run = refresh.pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            // Nothing else replaces a Refreshing state, so this run's outcome is the one to keep.
            state = Exit.isSuccess(exit) ? { _tag: "Held", credential: exit.value } : { _tag: "Empty" }
            Deferred.doneUnsafe(
              result,
              Exit.map(exit, (credential) => credential.value)
            )
          })
        )
      )
      return Effect.andThen(Effect.forkIn(run, scope), Deferred.await(result))
    })

    // Every request asks: the held credential is answered without allocating.
    const get: Effect.Effect<A, E> = Effect.clockWith((clock) =>
      Effect.suspend(() => {
        const current = state
        if (current._tag === "Held" && isValid(current.credential, clock.currentTimeMillisUnsafe()))
          return Effect.succeed(current.credential.value)
        return current._tag === "Refreshing" ? Deferred.await(current.result) : startRefresh
      })
    )

    const invalidate = (seen: A): Effect.Effect<void> =>
      Effect.sync(() => {
        if (state._tag === "Held" && state.credential.value === seen) state = { _tag: "Empty" }
      })

    return { get, invalidate }
  })
