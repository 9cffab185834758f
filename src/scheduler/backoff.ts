import { Duration, Effect } from "effect"

export interface BackoffOptions {
  /** Delay after the first failure; doubles with each further failure. */
  readonly base?: Duration.Input
  /** The delay never grows past this. */
  readonly cap?: Duration.Input
}

/** client-go's per-item default for controllers: 5 ms doubling to 1000 s. */
export const controllerBackoff = { base: Duration.millis(5), cap: Duration.seconds(1000) } as const

/** The delay after `failures` earlier consecutive failures: base * 2^failures, at most cap. */
export const backoffDelayMillis = (failures: number, baseMillis: number, capMillis: number): number =>
  // 2 ** failures reaches Infinity after ~1024 failures; min() still gives cap.
  Math.min(capMillis, baseMillis * 2 ** failures)

/** Per-key exponential backoff: each failure of a key doubles its next delay until it succeeds. */
export interface Backoff {
  /** Records a failure of key and returns how long to wait before retrying it. */
  readonly next: (key: string) => Effect.Effect<Duration.Duration>
  /** Key succeeded (or is gone): its next failure starts again at base. */
  readonly forget: (key: string) => Effect.Effect<void>
  /** Consecutive failures recorded for key, for retry metrics and messages. */
  readonly failures: (key: string) => Effect.Effect<number>
}

/**
 * A plain Map, not a Ref of an immutable map: a controller may hold 100,000 failing keys, and
 * each update must stay O(1). Workers hand a key to one fiber at a time, and each call is one
 * synchronous step, so no lock is needed.
 */
export const makeBackoff = (options: BackoffOptions = {}): Effect.Effect<Backoff> =>
  Effect.sync(() => {
    const baseMillis = Duration.toMillis(options.base ?? controllerBackoff.base)
    const capMillis = Duration.toMillis(options.cap ?? controllerBackoff.cap)
    const failures = new Map<string, number>()
    return {
      next: (key) =>
        Effect.sync(() => {
          const n = failures.get(key) ?? 0
          failures.set(key, n + 1)
          return Duration.millis(backoffDelayMillis(n, baseMillis, capMillis))
        }),
      forget: (key) => Effect.sync(() => void failures.delete(key)),
      failures: (key) => Effect.sync(() => failures.get(key) ?? 0)
    }
  })
