import { Duration, Effect } from "effect"

export interface ItemRateLimit {
  /** Delay after the first failure; doubles with each further failure. */
  readonly base?: Duration.Input
  /** The delay never grows past this. */
  readonly cap?: Duration.Input
}

/** client-go's per-item default for controllers (DefaultControllerRateLimiter): 5 ms doubling to 1000 s. */
const controllerItemRateLimit = { base: Duration.millis(5), cap: Duration.seconds(1000) } as const

/** The delay after `requeues` earlier consecutive failures: base * 2^requeues, at most cap. */
export const exponentialDelayMillis = (requeues: number, baseMillis: number, capMillis: number): number =>
  // 2 ** requeues reaches Infinity after ~1024 failures; min() still gives cap.
  Math.min(capMillis, baseMillis * 2 ** requeues)

/**
 * client-go's ItemExponentialFailureRateLimiter: each failure of a key doubles its next delay
 * until the key succeeds and is forgotten.
 */
export interface ItemRateLimiter {
  /** Records a failure of key and returns how long to wait before retrying it. */
  readonly when: (key: string) => Effect.Effect<Duration.Duration>
  /** Key succeeded (or is gone): its next failure starts again at base. */
  readonly forget: (key: string) => Effect.Effect<void>
  /** Consecutive failures recorded for key, for retry metrics and messages. */
  readonly numRequeues: (key: string) => Effect.Effect<number>
}

/**
 * A plain Map, not a Ref of an immutable map: a controller may hold 100,000 failing keys, and
 * each update must stay O(1). Workers hand a key to one fiber at a time, and each call is one
 * synchronous step, so no lock is needed.
 */
export const makeItemRateLimiter = (limit: ItemRateLimit = {}): Effect.Effect<ItemRateLimiter> =>
  Effect.sync(() => {
    const baseMillis = Duration.toMillis(limit.base ?? controllerItemRateLimit.base)
    const capMillis = Duration.toMillis(limit.cap ?? controllerItemRateLimit.cap)
    const requeues = new Map<string, number>()
    return {
      when: (key) =>
        Effect.sync(() => {
          const n = requeues.get(key) ?? 0
          requeues.set(key, n + 1)
          return Duration.millis(exponentialDelayMillis(n, baseMillis, capMillis))
        }),
      forget: (key) => Effect.sync(() => void requeues.delete(key)),
      numRequeues: (key) => Effect.sync(() => requeues.get(key) ?? 0)
    }
  })
