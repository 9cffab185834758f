import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Random } from "effect"
import { TestClock } from "effect/testing"
import { type CriError, ImageNotFound, RegistryThrottled } from "../../src/cri/errors.ts"
import {
  AttemptFailed,
  type AttemptError,
  type AttemptPolicy,
  attemptSchedule,
  nextAttempt,
  previousFailure,
  pullFailure,
  throttleBackoffMillis
} from "../../src/daemon/attemptPolicy.ts"
import { deadlinePassed } from "../../src/daemon/pullMessages.ts"

const throttled = new RegistryThrottled({ image: "app:a", message: "429 Too Many Requests" })
const notFound = new ImageNotFound({ image: "app:a", message: "manifest unknown" })

const policy = (attempts: number, throttledRetries: number, deadlineAt?: number): AttemptPolicy => ({
  attempts,
  timeoutMillis: 60_000,
  deadlineAt,
  throttledRetries
})

/**
 * Runs attempts under the policy's schedule on the TestClock, the n-th (from 0) failing with
 * `failureAt(n)`, numbered as the pull worker numbers them: when each started, its number, how
 * the pull ended.
 */
const run = (policy: AttemptPolicy, failureAt: (n: number) => CriError) =>
  Effect.gen(function* () {
    const starts: Array<number> = []
    const numbers: Array<number> = []
    const attempt = Effect.gen(function* () {
      const previous = yield* previousFailure
      const n = starts.length
      starts.push(yield* Clock.currentTimeMillis)
      const number = nextAttempt(policy, previous)
      numbers.push(number)
      const failure = failureAt(n)
      return yield* Effect.fail(
        new AttemptFailed({
          attempt: number,
          throttled: (previous?.throttled ?? 0) + (failure._tag === "RegistryThrottled" ? 1 : 0),
          failure,
          detail: failure._tag,
          problems: [],
          providerFailed: false,
          providerAnswers: [],
          progress: 0
        }) as AttemptError
      )
    })
    const fiber = yield* Effect.forkChild(
      attempt.pipe(Effect.retryOrElse(attemptSchedule(policy), (error, verdict) => Effect.succeed(pullFailure(error, verdict))))
    )
    yield* TestClock.adjust("3 hours")
    const ended = yield* Fiber.join(fiber)
    const gaps = starts.slice(1).map((start, i) => start - starts[i]!)
    return { starts, numbers, gaps, ended }
  })

describe("throttled attempts", () => {
  it("wait 5 s doubling to 5 min, of which the upper half is jitter", () => {
    expect([1, 2, 3].map((n) => throttleBackoffMillis(n, 0))).toEqual([2500, 5000, 10_000])
    expect([1, 2, 3].map((n) => throttleBackoffMillis(n, 0.5))).toEqual([3750, 7500, 15_000])
    expect(throttleBackoffMillis(7, 0)).toBe(150_000)
    expect(throttleBackoffMillis(30, 0.999_999)).toBe(300_000)
  })

  it.effect("are retried after the throttle backoff without counting against backoffLimit", () =>
    Effect.gen(function* () {
      // backoffLimit 1 (2 attempts): three throttled attempts, then two that fail for good.
      const { numbers, gaps, ended } = yield* run(policy(2, 10), (n) => (n < 3 ? throttled : notFound))
      expect(numbers).toEqual([1, 1, 1, 1, 2])
      const [a, b, c, d] = gaps
      expect([a! >= 2500 && a! <= 5000, b! >= 5000 && b! <= 10_000, c! >= 10_000 && c! <= 20_000]).toEqual([true, true, true])
      expect(d).toBe(1000)
      expect(ended).toMatchObject({ attempts: 2, failure: { _tag: "ImageNotFound" } })
    }).pipe(Random.withSeed("throttle"))
  )

  it.effect("the jitter spreads nodes throttled together", () =>
    Effect.gen(function* () {
      const first = yield* run(policy(1, 3), () => throttled).pipe(Random.withSeed("node-1"))
      const second = yield* run(policy(1, 3), () => throttled).pipe(Random.withSeed("node-2"))
      expect(first.gaps).not.toEqual(second.gaps)
    })
  )

  it.effect("count against backoffLimit past the bound, and the pull ends throttled", () =>
    Effect.gen(function* () {
      const { numbers, ended } = yield* run(policy(3, 2), () => throttled)
      // Two forgiven, then attempts 1 to 3 count.
      expect(numbers).toEqual([1, 1, 1, 2, 3])
      expect(ended).toMatchObject({ _tag: "GaveUp", attempts: 3, failure: { _tag: "RegistryThrottled" } })
    })
  )

  it.effect("give up at the deadline, which always wins", () =>
    Effect.gen(function* () {
      const { starts, ended } = yield* run(policy(4, 10, 30_000), () => throttled)
      expect(starts.at(-1)).toBeLessThan(30_000)
      expect(ended).toMatchObject({ failure: undefined, detail: `${deadlinePassed}; last error: RegistryThrottled` })
    })
  )
})
