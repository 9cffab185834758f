import { Clock, Duration, Effect } from "effect"
import type { PullProgress } from "../cri/CriRuntime.ts"
import { clockAfter, PullStalled, stallVerdict, stoppedClock } from "./stallClock.ts"

/** The stall clock of one pull (stallClock.ts): fed with its progress, it ends the pull that stalls. */
export interface StallWatch {
  /** Each progress report of the pull, as the runtime gives it. */
  readonly observe: (progress: PullProgress) => Effect.Effect<void>
  /** Runs the pull; once the clock runs out the pull is cancelled (interrupted) and fails with PullStalled. */
  readonly guard: <A, E, R>(pull: Effect.Effect<A, E, R>) => Effect.Effect<A, E | PullStalled, R>
}

/** A watch for one pull of `image`; with `timeoutMillis` 0 it watches nothing. */
export const makeStallWatch = (image: string, timeoutMillis: number): Effect.Effect<StallWatch> =>
  Effect.sync(() => {
    let clock = stoppedClock
    const observe = (progress: PullProgress): Effect.Effect<void> =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        clock = clockAfter(clock, progress, now)
      })
    const watch: Effect.Effect<never, PullStalled> = Effect.gen(function* () {
      while (true) {
        const verdict = stallVerdict(clock, yield* Clock.currentTimeMillis, timeoutMillis)
        if (verdict._tag === "Stalled") {
          return yield* new PullStalled({ image, stalledMillis: timeoutMillis, bytesDone: clock.bytesDone, bytesTotal: clock.bytesTotal })
        }
        yield* Effect.sleep(Duration.millis(verdict.afterMillis))
      }
    })
    return {
      observe,
      guard: <A, E, R>(pull: Effect.Effect<A, E, R>): Effect.Effect<A, E | PullStalled, R> =>
        timeoutMillis <= 0 ? pull : Effect.raceFirst(pull, watch)
    }
  })
