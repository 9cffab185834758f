// Client-side request limits, as client-go's: a token bucket holding `burst` tokens, refilled at
// `qps` per second. It reads Effect's Clock, so tests move time with TestClock instead of sleeping.
import { Clock, Effect } from "effect"

export interface RateLimit {
  /** Sustained requests per second. */
  readonly qps: number
  /** Requests allowed at once after a quiet period. */
  readonly burst: number
}

/**
 * The controller's default client limits (`--kube-api-qps`, `--kube-api-burst`). Its writes follow
 * the pulls it drives, one NodeImage patch per node and job, so it needs about the sum over running
 * jobs of parallelism / pull time: 10 jobs of parallelism 100 on 1 s pulls are 1,000 a second. At
 * 50 such a run took 18 times its pull time (bench:scale); the API server's own limits
 * (priority and fairness) still apply.
 */
export const controllerRateLimit: RateLimit = { qps: 1000, burst: 2000 }
/** Each daemon's default: thousands of nodes share one API server. */
export const daemonRateLimit: RateLimit = { qps: 5, burst: 10 }

export interface RateLimiter {
  /** Waits for a token; an interrupted wait gives its reserved token back. */
  readonly take: Effect.Effect<void>
}

export const makeRateLimiter = (limit: RateLimit): RateLimiter => {
  if (!(limit.qps > 0) || !(limit.burst >= 1)) {
    throw new RangeError(`a rate limit needs qps > 0 and burst >= 1, got qps ${limit.qps}, burst ${limit.burst}`)
  }
  const perMillis = limit.qps / 1000
  let tokens = limit.burst
  let last: number | undefined

  // Tokens may go negative: each waiter reserves its token at once, so waiters are served in
  // arrival order and none starves, as golang.org/x/time/rate's reservations.
  const reserve = Effect.map(Clock.currentTimeMillis, (now) => {
    tokens = Math.min(limit.burst, tokens + (last === undefined ? 0 : (now - last) * perMillis))
    last = now
    tokens -= 1
    return tokens >= 0 ? 0 : -tokens / perMillis
  })

  const take = Effect.flatMap(reserve, (waitMillis) =>
    waitMillis === 0
      ? Effect.void
      : Effect.sleep(Math.ceil(waitMillis)).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              tokens += 1
            })
          )
        )
  )

  return { take }
}
