import { Effect, Semaphore } from "effect"

/** Runs effects one at a time per key; different keys run side by side. */
export type KeyedLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * A mutex per key, made on first use and dropped when its last user leaves, so the map holds only
 * the keys in use (a NodeImage per node written at this moment, not every node ever written).
 */
export const makeKeyedLock = (): KeyedLock => {
  const held = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  return (key, effect) =>
    Effect.suspend(() => {
      let entry = held.get(key)
      if (entry === undefined) held.set(key, (entry = { semaphore: Semaphore.makeUnsafe(1), users: 0 }))
      const mine = entry
      mine.users++
      return mine.semaphore
        .withPermits(1)(effect)
        .pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (--mine.users === 0) held.delete(key)
            })
          )
        )
    })
}
