import { Effect, Semaphore } from "effect"

export interface SlotCounts {
  /** Workers holding a slot (pulling). */
  readonly active: number
  /** Workers waiting for one. */
  readonly waiting: number
}

/** The per-node cap on concurrent pulls (`--max-concurrent-pulls`). */
export interface PullSlots {
  /**
   * Runs `use` holding a slot. When none is free, `onWaiting` runs first (the tag reports
   * Waiting); `onAcquired` runs once the slot is held (the tag reports Pulling).
   */
  readonly withSlot: <A, E, R>(
    hooks: { readonly onWaiting: Effect.Effect<void>; readonly onAcquired: Effect.Effect<void> },
    use: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  readonly counts: () => SlotCounts
}

export const makePullSlots = (slots: number, onChange: (counts: SlotCounts) => Effect.Effect<void>): Effect.Effect<PullSlots> =>
  Effect.gen(function* () {
    const semaphore = yield* Semaphore.make(Math.max(1, slots))
    let active = 0
    let waiting = 0
    const changed = Effect.suspend(() => onChange({ active, waiting }))
    const adjust = (dActive: number, dWaiting: number) =>
      Effect.suspend(() => {
        active += dActive
        waiting += dWaiting
        return changed
      })

    const withSlot: PullSlots["withSlot"] = (hooks, use) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          if (!(yield* Semaphore.takeIfAvailable(semaphore, 1))) {
            yield* adjust(0, 1)
            yield* hooks.onWaiting
            // Interrupted while waiting: no slot was taken, so nothing to give back.
            yield* restore(Semaphore.take(semaphore, 1)).pipe(Effect.ensuring(adjust(0, -1)))
          }
          yield* adjust(1, 0)
          return yield* restore(Effect.andThen(hooks.onAcquired, use)).pipe(
            Effect.ensuring(Effect.andThen(Semaphore.release(semaphore, 1), adjust(-1, 0)))
          )
        })
      )

    return { withSlot, counts: () => ({ active, waiting }) }
  })
