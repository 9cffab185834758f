import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { ImageNotFound } from "../../src/cri/errors.ts"
import {
  afterFailure,
  AttemptFailed,
  type AttemptError,
  type AttemptPolicy,
  attemptSchedule,
  NoTimeLeft,
  previousFailure,
  pullFailure
} from "../../src/daemon/attemptPolicy.ts"
import { nothingSeen, progressStep } from "../../src/daemon/attemptProgress.ts"
import { deadlinePassed } from "../../src/daemon/pullMessages.ts"
import { StatusWriteFailed, statusWriteRetry } from "../../src/daemon/statusReporter.ts"

const failed = (attempt: number, progress = 0) =>
  new AttemptFailed({
    attempt,
    throttled: 0,
    failure: new ImageNotFound({ image: "app:a", message: "manifest unknown" }),
    detail: `image not found (attempt ${attempt})`,
    problems: [],
    providerFailed: false,
    providerAnswers: [],
    progress
  })

const policy = (attempts: number, deadlineAt?: number): AttemptPolicy => ({
  attempts,
  timeoutMillis: 60_000,
  deadlineAt,
  throttledRetries: 10
})

/**
 * Runs attempts that each take `attemptMillis` and fail, under the policy's schedule on the
 * TestClock: when each attempt started, and how the pull ended.
 */
const runFailing = (policy: AttemptPolicy, attemptMillis = 0) =>
  Effect.gen(function* () {
    const starts: Array<number> = []
    const attempt = Effect.gen(function* () {
      const previous = yield* previousFailure
      starts.push(yield* Clock.currentTimeMillis)
      if (attemptMillis > 0) yield* Effect.sleep(attemptMillis)
      return yield* Effect.fail(failed((previous?.attempt ?? 0) + 1) as AttemptError)
    })
    const fiber = yield* Effect.forkChild(
      attempt.pipe(Effect.retryOrElse(attemptSchedule(policy), (error, verdict) => Effect.succeed(pullFailure(error, verdict))))
    )
    yield* TestClock.adjust("1 hour")
    return { starts, ended: yield* Fiber.join(fiber) }
  })

describe("attemptSchedule", () => {
  it.effect("waits 1 s doubling to 30 s between attempts and stops after backoffLimit + 1", () =>
    Effect.gen(function* () {
      const { starts, ended } = yield* runFailing(policy(8))
      expect(starts).toEqual([0, 1000, 3000, 7000, 15_000, 31_000, 61_000, 91_000])
      expect(ended).toMatchObject({ attempts: 8, detail: "image not found (attempt 8)", failure: { _tag: "ImageNotFound" } })
    })
  )

  it.effect("one attempt for backoffLimit 0", () =>
    Effect.gen(function* () {
      const { starts, ended } = yield* runFailing(policy(1))
      expect(starts).toEqual([0])
      expect(ended).toMatchObject({ attempts: 1, detail: "image not found (attempt 1)" })
    })
  )

  it.effect("stops when the backoff would end at or past the deadline, and says so", () =>
    Effect.gen(function* () {
      // Failures at 0, 1000 and 3000; a 4 s backoff would end at 7000, past the deadline at 5000.
      const { starts, ended } = yield* runFailing(policy(10, 5000))
      expect(starts).toEqual([0, 1000, 3000])
      expect(ended).toEqual({
        _tag: "GaveUp",
        attempts: 3,
        detail: `${deadlinePassed}; last error: image not found (attempt 3)`,
        problems: [],
        providerFailed: false,
        providerAnswers: [],
        progress: 0,
        failure: undefined
      })
    })
  )

  it.effect("the last attempt ending at the deadline reports the deadline", () =>
    Effect.gen(function* () {
      const { starts, ended } = yield* runFailing(policy(2, 3000), 1000)
      expect(starts).toEqual([0, 2000])
      expect(ended).toMatchObject({ attempts: 2, detail: `${deadlinePassed}; last error: image not found (attempt 2)`, failure: undefined })
    })
  )
})

describe("afterFailure", () => {
  it("retries with the backoff while attempts and time remain", () => {
    expect(afterFailure(policy(4), failed(2), 0)).toEqual({ _tag: "Retry", failed: failed(2), delayMillis: 2000, forgiven: false })
    expect(afterFailure(policy(4, 10_000), failed(3), 5999)).toMatchObject({ _tag: "Retry", delayMillis: 4000 })
  })

  it("gives up after the last attempt; the deadline is the reason when it has come", () => {
    expect(afterFailure(policy(4), failed(4), 0)).toEqual({ _tag: "GiveUp", deadline: false })
    expect(afterFailure(policy(4, 10_000), failed(3), 6000)).toEqual({ _tag: "GiveUp", deadline: true })
    expect(afterFailure(policy(4, 10_000), failed(4), 9999)).toEqual({ _tag: "GiveUp", deadline: false })
    expect(afterFailure(policy(4, 10_000), failed(4), 10_000)).toEqual({ _tag: "GiveUp", deadline: true })
    expect(afterFailure(policy(4), new NoTimeLeft({ previous: undefined }), 0)).toEqual({ _tag: "GiveUp", deadline: true })
  })
})

describe("pullFailure", () => {
  it("no attempt before the deadline: the deadline alone", () => {
    expect(pullFailure(new NoTimeLeft({ previous: undefined }), { _tag: "GiveUp", deadline: true })).toEqual({
      _tag: "GaveUp",
      attempts: 0,
      detail: deadlinePassed,
      problems: [],
      providerFailed: false,
      providerAnswers: [],
      progress: 0,
      failure: undefined
    })
  })

  it("no time for the next attempt: the deadline, with the previous attempt's error, progress and count", () => {
    expect(pullFailure(new NoTimeLeft({ previous: failed(2, 40) }), { _tag: "GiveUp", deadline: true })).toMatchObject({
      attempts: 2,
      detail: `${deadlinePassed}; last error: image not found (attempt 2)`,
      progress: 40,
      failure: undefined
    })
  })
})

describe("progressStep", () => {
  it("counts new bytes, moves the percentage only forward and keeps 100 for Succeeded", () => {
    const first = progressStep(nothingSeen, { bytesDone: 100, bytesTotal: 1000, percent: 10 })
    expect(first).toEqual({ seen: { percent: 10, bytes: 100 }, addedBytes: 100, moved: true })
    const same = progressStep(first.seen, { bytesDone: 150, bytesTotal: 1000, percent: 10 })
    expect(same).toEqual({ seen: { percent: 10, bytes: 150 }, addedBytes: 50, moved: false })
    const done = progressStep(same.seen, { bytesDone: 1000, bytesTotal: 1000, percent: 100 })
    expect(done).toEqual({ seen: { percent: 99, bytes: 1000 }, addedBytes: 850, moved: true })
    expect(progressStep(done.seen, { bytesDone: 500, bytesTotal: 1000, percent: 50 })).toEqual({
      seen: { percent: 99, bytes: 1000 },
      addedBytes: 0,
      moved: false
    })
  })
})

describe("statusWriteRetry", () => {
  it.effect("waits 1 s doubling to 30 s, and never gives up", () =>
    Effect.gen(function* () {
      const step = yield* Schedule.toStep(statusWriteRetry)
      const refused = new StatusWriteFailed({ message: "Unavailable: etcd leader changed" })
      const delays: Array<number> = []
      for (let i = 0; i < 12; i++) {
        const [, delay] = yield* step(0, refused)
        delays.push(Duration.toMillis(delay))
      }
      expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000, 30_000, 30_000])
    })
  )
})
