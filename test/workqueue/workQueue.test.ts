import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { makeWorkQueue } from "../../src/workqueue/workQueue.ts"
import { exponentialDelayMillis, makeItemRateLimiter } from "../../src/workqueue/itemRateLimiter.ts"
import { RetryableError, TerminalError } from "../../src/workqueue/ReconcileError.ts"
import { asideFromWorker, runWorkers } from "../../src/workqueue/runWorkers.ts"
import type { ReconcileResult } from "../../src/workqueue/runWorkers.ts"
import { Scheduler } from "../../src/workqueue/Scheduler.ts"
import type { WorkQueue } from "../../src/workqueue/Scheduler.ts"

/** The key take would hand out right now, or undefined if it would wait (the wait is abandoned). */
const tryTake = (queue: WorkQueue) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(queue.take, { startImmediately: true })
    yield* Effect.yieldNow
    const exit = fiber.pollUnsafe()
    if (exit === undefined) {
      yield* Fiber.interrupt(fiber)
      return undefined
    }
    return Exit.isSuccess(exit) ? exit.value : undefined
  })

/** Takes every key due now, marking each done. */
const drain = (queue: WorkQueue) =>
  Effect.gen(function* () {
    const keys: Array<string> = []
    while (true) {
      const key = yield* tryTake(queue)
      if (key === undefined) return keys
      keys.push(key)
      yield* queue.done(key)
    }
  })

const queue = makeWorkQueue("test")

interface LogEntry {
  readonly level: string
  readonly message: unknown
  readonly cause: Cause.Cause<unknown>
  readonly annotations: Record<string, unknown>
}

/** Replaces the loggers with one that records into entries. */
const captureLogs = (entries: Array<LogEntry>) =>
  Logger.layer([
    Logger.make((options) => {
      entries.push({
        level: options.logLevel,
        message: options.message,
        cause: options.cause,
        annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
      })
    })
  ])

describe("WorkQueue", () => {
  it.effect("holds a key once however often it is added", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("a")
      yield* q.add("a")
      yield* q.add("a", "1 second")
      assert.strictEqual(yield* q.size, 1)
      assert.deepStrictEqual(yield* drain(q), ["a"])
      assert.strictEqual(yield* q.size, 0)
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(yield* drain(q), [])
    })
  )

  it.effect("the earliest requested time wins", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("late-then-early", "10 seconds")
      yield* q.add("late-then-early", "5 seconds")
      yield* q.add("early-then-late", "1 second")
      yield* q.add("early-then-late", "5 seconds")
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(yield* drain(q), [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* drain(q), ["early-then-late"])
      yield* TestClock.adjust("4 seconds")
      assert.deepStrictEqual(yield* drain(q), ["late-then-early"])
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* drain(q), [])
    })
  )

  it.effect("a waiting take wakes when a delayed key falls due, and when an earlier key arrives", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("slow", "1 minute")
      const taker = yield* Effect.forkChild(q.take, { startImmediately: true })
      yield* TestClock.adjust("59 seconds")
      assert.isUndefined(taker.pollUnsafe())
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(taker), "slow")

      const second = yield* Effect.forkChild(q.take, { startImmediately: true })
      yield* q.add("later", "1 hour")
      yield* q.add("sooner", "1 second")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(second), "sooner")
    })
  )

  it.effect("a key wakes one of the waiting takers, and each further key another", () =>
    Effect.gen(function* () {
      const q = yield* queue
      const takers = yield* Effect.forEach([1, 2, 3, 4], () => Effect.forkChild(q.take, { startImmediately: true }))
      const settled = Effect.gen(function* () {
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        return takers.flatMap((taker) => {
          const exit = taker.pollUnsafe()
          return exit !== undefined && Exit.isSuccess(exit) ? [exit.value] : []
        })
      })
      yield* q.add("a")
      assert.deepStrictEqual(yield* settled, ["a"])
      yield* q.add("b", "1 second")
      yield* q.add("c", "2 seconds")
      yield* q.add("d")
      assert.sameMembers(yield* settled, ["a", "d"])
      yield* TestClock.adjust("1 second")
      assert.sameMembers(yield* settled, ["a", "d", "b"])
      yield* TestClock.adjust("1 second")
      assert.sameMembers(yield* settled, ["a", "d", "b", "c"])
    })
  )

  it.effect("a taker interrupted while it kept the timer for a delayed key hands the timer on", () =>
    Effect.gen(function* () {
      const q = yield* queue
      const first = yield* Effect.forkChild(q.take, { startImmediately: true })
      const second = yield* Effect.forkChild(q.take, { startImmediately: true })
      yield* q.add("k", "1 second")
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      // One of them sleeps until k falls due, the other waits for a wake-up: the sleeper goes.
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(second), "k")
    })
  )

  it.effect("due keys come out in the order they were added, and never behind a delayed key", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("delayed", "1 hour")
      for (const key of ["c", "a", "b"]) yield* q.add(key)
      assert.deepStrictEqual(yield* drain(q), ["c", "a", "b"])

      yield* q.add("x", "10 millis")
      yield* q.add("y", "10 millis")
      yield* q.add("z", "5 millis")
      yield* TestClock.adjust("10 millis")
      yield* q.add("now")
      // By due time, then by add order among equal due times.
      assert.deepStrictEqual(yield* drain(q), ["z", "x", "y", "now"])
      assert.strictEqual(yield* q.size, 1)
    })
  )

  it.effect("an earlier re-add takes its place in add order at that moment", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("a", "10 millis")
      yield* q.add("b", "5 millis")
      yield* q.add("a", "5 millis")
      yield* TestClock.adjust("5 millis")
      assert.deepStrictEqual(yield* drain(q), ["b", "a"])
    })
  )

  it.effect("a key finished after others fell due goes behind them", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("busy")
      yield* q.take
      yield* q.add("busy")
      yield* TestClock.adjust("1 millis")
      yield* q.add("waiting")
      yield* TestClock.adjust("1 millis")
      yield* q.done("busy")
      assert.deepStrictEqual(yield* drain(q), ["waiting", "busy"])
    })
  )

  it.effect("a key re-added while being worked on is handed out again only after done", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("a")
      assert.strictEqual(yield* q.take, "a")
      yield* q.add("a")
      yield* q.add("b")
      assert.strictEqual(yield* q.size, 2)
      // A second worker gets b, never a second copy of a.
      assert.strictEqual(yield* tryTake(q), "b")
      assert.isUndefined(yield* tryTake(q))
      const waiting = yield* Effect.forkChild(q.take)
      yield* q.done("a")
      assert.strictEqual(yield* Fiber.join(waiting), "a")
      yield* q.done("a")
      yield* q.done("b")
      assert.strictEqual(yield* q.size, 0)
    })
  )

  it.effect("a delayed re-add during processing keeps its delay after done", () =>
    Effect.gen(function* () {
      const q = yield* queue
      yield* q.add("a")
      yield* q.take
      yield* q.add("a", "10 seconds")
      yield* TestClock.adjust("1 second")
      yield* q.done("a")
      assert.isUndefined(yield* tryTake(q))
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual(yield* tryTake(q), "a")
    })
  )

  it.effect("closing the scope stops the queue: adds are ignored and takers are interrupted", () =>
    Effect.gen(function* () {
      const q = yield* Effect.scoped(queue)
      yield* q.add("a")
      assert.strictEqual(yield* q.size, 0)
      const exit = yield* Effect.exit(q.take)
      assert.isTrue(Exit.hasInterrupts(exit))
    })
  )

  it.effect("the Scheduler layer reports how long a due key waited for a worker", () =>
    Effect.gen(function* () {
      const seen: Array<[string, string, number]> = []
      const q = yield* Scheduler.use((scheduler) => scheduler.queue("nodeimage")).pipe(
        Effect.provide(SchedulerLive.layer({ onTaken: (name, key, waited) => Effect.sync(() => void seen.push([name, key, waited])) }))
      )
      yield* q.add("a", "1 second")
      yield* TestClock.adjust("3 seconds")
      yield* q.take
      assert.deepStrictEqual(seen, [["nodeimage", "a", 2000]])
    })
  )

  it.effect("a failing observer loses no key: it is handed out again", () =>
    Effect.gen(function* () {
      let calls = 0
      const q = yield* makeWorkQueue("test", {
        onTaken: () => (++calls === 1 ? Effect.die(new Error("observer bug")) : Effect.void)
      })
      yield* q.add("a")
      yield* q.add("b")
      const exit = yield* Effect.exit(q.take)
      assert.isTrue(Exit.hasDies(exit))
      assert.strictEqual(yield* q.size, 2)
      assert.deepStrictEqual(yield* drain(q), ["b", "a"])
    })
  )
})

describe("item rate limiter", () => {
  it("doubles from base up to cap", () => {
    const delays = Array.from({ length: 20 }, (_, n) => exponentialDelayMillis(n, 5, 1_000_000))
    assert.deepStrictEqual(delays.slice(0, 4), [5, 10, 20, 40])
    assert.strictEqual(delays[17], 655_360)
    assert.strictEqual(delays[18], 1_000_000)
    assert.strictEqual(exponentialDelayMillis(5000, 5, 1_000_000), 1_000_000)
  })

  it.effect("is per key and forget starts a key again at base", () =>
    Effect.gen(function* () {
      const rateLimiter = yield* makeItemRateLimiter({ base: "5 millis", cap: "30 millis" })
      const next = (key: string) => Effect.map(rateLimiter.when(key), Duration.toMillis)
      assert.deepStrictEqual([yield* next("a"), yield* next("a"), yield* next("a"), yield* next("a")], [5, 10, 20, 30])
      assert.strictEqual(yield* next("b"), 5)
      assert.strictEqual(yield* rateLimiter.numRequeues("a"), 4)
      yield* rateLimiter.forget("a")
      assert.strictEqual(yield* rateLimiter.numRequeues("a"), 0)
      assert.strictEqual(yield* next("a"), 5)
    })
  )

  it.effect("defaults to client-go's 5 ms .. 1000 s", () =>
    Effect.gen(function* () {
      const rateLimiter = yield* makeItemRateLimiter()
      const delays: Array<number> = []
      for (let i = 0; i < 30; i++) delays.push(Duration.toMillis(yield* rateLimiter.when("k")))
      assert.strictEqual(delays[0], 5)
      assert.strictEqual(delays[29], 1_000_000)
    })
  )
})

describe("runWorkers", () => {
  it.effect("retries a failing key after growing delays, logging each failure with its key; a success forgets them", () => {
    const logs: Array<LogEntry> = []
    return Effect.gen(function* () {
      const q = yield* queue
      const rateLimiter = yield* makeItemRateLimiter({ base: "5 millis", cap: "1 second" })
      const attempts: Array<number> = []
      const results: Array<ReconcileResult> = []
      yield* Effect.forkChild(
        runWorkers(q, {
          concurrency: 1,
          rateLimiter,
          reconcile: () =>
            Effect.gen(function* () {
              const now = yield* TestClock.testClockWith((c) => c.currentTimeMillis)
              attempts.push(now)
              if (attempts.length <= 4) return yield* new RetryableError({ cause: "boom" })
              return {}
            }),
          observe: { onFinished: (_key, _millis, result) => Effect.sync(() => void results.push(result)) }
        })
      )
      yield* q.add("k")
      yield* TestClock.adjust("1 second")
      // Failures at 0, 5, 15, 35; the success at 75 ms.
      assert.deepStrictEqual(attempts, [0, 5, 15, 35, 75])
      assert.deepStrictEqual(results, ["error", "error", "error", "error", "success"])
      assert.strictEqual(yield* rateLimiter.numRequeues("k"), 0)
      assert.deepStrictEqual(
        logs.map((entry) => [entry.level, entry.annotations]),
        [
          ["Warn", { key: "k", failures: 1, retryInMillis: 5 }],
          ["Warn", { key: "k", failures: 2, retryInMillis: 10 }],
          ["Warn", { key: "k", failures: 3, retryInMillis: 20 }],
          ["Warn", { key: "k", failures: 4, retryInMillis: 40 }]
        ]
      )
      assert.include(String(logs[0]?.message), "reconcile failed")
      assert.deepStrictEqual(
        logs[0]?.cause.reasons.map((reason) => (Cause.isFailReason(reason) ? reason.error : reason)),
        ["boom"]
      )
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("a TerminalError is logged once as an error and not retried; its key's failures are forgotten", () => {
    const logs: Array<LogEntry> = []
    return Effect.gen(function* () {
      const q = yield* queue
      const rateLimiter = yield* makeItemRateLimiter({ base: "5 millis", cap: "1 second" })
      const attempts: Array<number> = []
      const results: Array<ReconcileResult> = []
      yield* Effect.forkChild(
        runWorkers(q, {
          concurrency: 1,
          rateLimiter,
          reconcile: () =>
            Effect.gen(function* () {
              attempts.push(yield* TestClock.testClockWith((c) => c.currentTimeMillis))
              if (attempts.length <= 2) return yield* new RetryableError({ cause: "unavailable" })
              if (attempts.length === 3) return yield* new TerminalError({ cause: "can never succeed" })
              return {}
            }),
          observe: { onFinished: (_key, _millis, result) => Effect.sync(() => void results.push(result)) }
        })
      )
      yield* q.add("k")
      yield* TestClock.adjust("1 hour")
      // Retried at 5 and 15 ms; the terminal failure at 15 ms is the last attempt.
      assert.deepStrictEqual(attempts, [0, 5, 15])
      assert.deepStrictEqual(results, ["error", "error", "error"])
      assert.strictEqual(yield* rateLimiter.numRequeues("k"), 0)
      assert.strictEqual(yield* q.size, 0)
      assert.deepStrictEqual(
        logs.map((entry) => entry.level),
        ["Warn", "Warn", "Error"]
      )
      assert.include(String(logs[2]?.message), "will not retry")
      // The reconcile's own error, not its wrapper.
      assert.deepStrictEqual(
        logs[2]?.cause.reasons.map((reason) => (Cause.isFailReason(reason) ? reason.error : reason)),
        ["can never succeed"]
      )
      assert.deepStrictEqual(logs[2]?.annotations, { key: "k" })
      // A later change wakes the key again.
      yield* q.add("k")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(attempts.length, 4)
      assert.deepStrictEqual(results, ["error", "error", "error", "success"])
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("requeueAfter brings the key back; a defect is logged as an error and retried", () => {
    const logs: Array<LogEntry> = []
    return Effect.gen(function* () {
      const q = yield* queue
      const runs: Array<number> = []
      const results: Array<ReconcileResult> = []
      yield* Effect.forkChild(
        runWorkers(q, {
          concurrency: 2,
          rateLimiter: yield* makeItemRateLimiter(),
          reconcile: () =>
            Effect.gen(function* () {
              runs.push(yield* TestClock.testClockWith((c) => c.currentTimeMillis))
              if (runs.length === 2) return yield* Effect.die(new Error("bug"))
              return { requeueAfter: "30 seconds" }
            }),
          observe: { onFinished: (_key, _millis, result) => Effect.sync(() => void results.push(result)) }
        })
      )
      yield* q.add("job")
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(runs, [0, 30_000, 30_005])
      assert.deepStrictEqual(results, ["requeue", "error", "requeue"])
      assert.deepStrictEqual(
        logs.map((entry) => entry.level),
        ["Error"]
      )
    }).pipe(Effect.provide(captureLogs(logs)))
  })

  it.effect("never runs more than concurrency at once, nor one key twice, under load", () =>
    Effect.gen(function* () {
      const q = yield* queue
      const concurrency = 4
      const active = new Set<string>()
      let inFlight = 0
      let peak = 0
      let completed = 0
      const keys = Array.from({ length: 300 }, (_, i) => `key-${i}`)
      const durations = new Map<string, number>()
      yield* Effect.forkChild(
        runWorkers(q, {
          concurrency,
          rateLimiter: yield* makeItemRateLimiter(),
          reconcile: (key) =>
            Effect.gen(function* () {
              assert.isFalse(active.has(key), `${key} handed out twice`)
              active.add(key)
              inFlight++
              peak = Math.max(peak, inFlight)
              // Re-add keys while they are being worked on: they must wait for done.
              const runs = (durations.get(key) ?? 0) + 1
              durations.set(key, runs)
              if (runs === 1) {
                yield* q.add(key)
                yield* q.add(keys[(keys.indexOf(key) * 7) % keys.length]!)
              }
              yield* Effect.sleep(1 + (keys.indexOf(key) % 13))
              active.delete(key)
              inFlight--
              completed++
              return {}
            }).pipe(Effect.onInterrupt(() => Effect.sync(() => active.delete(key))))
        })
      )
      for (const key of keys) yield* q.add(key)
      for (let i = 0; i < 1000 && (yield* q.size) > 0; i++) yield* TestClock.adjust("5 millis")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(peak, concurrency)
      assert.strictEqual(inFlight, 0)
      // Every key ran twice (its own re-add), some a third time (re-added by another key).
      for (const key of keys) assert.isAtLeast(durations.get(key) ?? 0, 2, key)
      assert.isAtLeast(completed, 600)
      assert.strictEqual(yield* q.size, 0)
    })
  )

  it.effect("a reconcile waiting aside frees its worker for other keys, and takes one again to go on", () =>
    Effect.gen(function* () {
      const q = yield* queue
      const shared = yield* Deferred.make<void>()
      const log: Array<string> = []
      let computing = 0
      let peak = 0
      /** Work on the worker: counted while it runs, with a pause so that overlaps show. */
      const compute = (what: string) =>
        Effect.gen(function* () {
          computing++
          peak = Math.max(peak, computing)
          log.push(what)
          yield* Effect.sleep(1)
          computing--
        })
      yield* Effect.forkChild(
        runWorkers(q, {
          concurrency: 1,
          rateLimiter: yield* makeItemRateLimiter(),
          reconcile: (key) =>
            Effect.gen(function* () {
              yield* compute(`${key} decides`)
              // Every key's part goes into the one shared wait; the last one ends it.
              if (key === "c") yield* Deferred.succeed(shared, undefined)
              yield* asideFromWorker(Deferred.await(shared))
              yield* compute(`${key} goes on`)
              return {}
            })
        })
      )
      for (const key of ["a", "b", "c"]) yield* q.add(key)
      yield* TestClock.adjust("1 second")
      // With one worker, a waiting key held it and the others waited for it forever; aside, all three
      // decide before any goes on, and still only one computes at a time.
      assert.deepStrictEqual(log.slice(0, 3), ["a decides", "b decides", "c decides"])
      assert.sameMembers(log.slice(3), ["a goes on", "b goes on", "c goes on"])
      assert.strictEqual(peak, 1)
      assert.strictEqual(yield* q.size, 0)
    })
  )

  it.effect("a worker interrupted mid-reconcile still calls done, and the key is kept", () =>
    Effect.gen(function* () {
      const q = yield* queue
      let started = 0
      const workers = yield* Effect.forkChild(
        runWorkers(q, {
          concurrency: 1,
          rateLimiter: yield* makeItemRateLimiter(),
          reconcile: () =>
            Effect.andThen(
              Effect.sync(() => started++),
              Effect.never
            )
        })
      )
      yield* q.add("stuck")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(started, 1)
      yield* Fiber.interrupt(workers)
      // Not left "processing": the key is due again and handed out at once.
      assert.strictEqual(yield* tryTake(q), "stuck")
    })
  )
})

type Command =
  | { readonly op: "add"; readonly key: string; readonly delay: number }
  | { readonly op: "take" }
  | { readonly op: "done"; readonly pick: number }
  | { readonly op: "tick"; readonly millis: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant("add" as const), key: fc.constantFrom("a", "b", "c", "d", "e"), delay: fc.constantFrom(0, 0, 1, 5, 20) }),
  fc.constant({ op: "take" as const }),
  fc.record({ op: fc.constant("done" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("tick" as const), millis: fc.constantFrom(0, 1, 3, 10) })
)

/**
 * Runs commands against the queue and a reference model (per key: the earliest due time asked
 * since it was last taken, and its place in add order). One taker may stay waiting across
 * commands, so wake-ups are checked too. After every command: a key is never out twice, a waiting
 * taker holds exactly the key the model says is next (and is still waiting only if none is due),
 * and size matches. At the end: nothing was lost.
 */
const checkAgainstModel = (commands: ReadonlyArray<Command>) =>
  Effect.gen(function* () {
    const q = yield* queue
    const pending = new Map<string, { due: number; seq: number }>()
    const inFlight: Array<string> = []
    let taker: Fiber.Fiber<string> | undefined
    let seq = 0
    const now = () => TestClock.testClockWith((c) => c.currentTimeMillis)
    const expectedNext = (at: number) => {
      let best: [string, { due: number; seq: number }] | undefined
      for (const entry of pending) {
        const [key, { due, seq }] = entry
        if (due > at || inFlight.includes(key)) continue
        if (best === undefined || due < best[1].due || (due === best[1].due && seq < best[1].seq)) best = entry
      }
      return best?.[0]
    }
    const settleTaker = Effect.gen(function* () {
      if (taker === undefined) return
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      const expected = expectedNext(yield* now())
      const exit = taker.pollUnsafe()
      if (exit === undefined) return assert.isUndefined(expected, "a due key did not wake the waiting taker")
      taker = undefined
      assert.isTrue(Exit.isSuccess(exit))
      const key = Exit.isSuccess(exit) ? exit.value : ""
      assert.notInclude(inFlight, key, "a key was handed out twice")
      assert.strictEqual(key, expected)
      pending.delete(key)
      inFlight.push(key)
    })
    for (const c of commands) {
      switch (c.op) {
        case "add": {
          const due = (yield* now()) + c.delay
          const known = pending.get(c.key)
          if (known === undefined) pending.set(c.key, { due, seq: seq++ })
          else if (due < known.due) pending.set(c.key, { due, seq: inFlight.includes(c.key) ? known.seq : seq++ })
          yield* q.add(c.key, c.delay)
          break
        }
        case "take": {
          taker ??= yield* Effect.forkChild(q.take, { startImmediately: true })
          break
        }
        case "done": {
          if (inFlight.length === 0) break
          const [key] = inFlight.splice(c.pick % inFlight.length, 1)
          // A re-add during processing falls due no earlier than done, behind keys already due.
          const parked = pending.get(key!)
          if (parked !== undefined) pending.set(key!, { due: Math.max(parked.due, yield* now()), seq: seq++ })
          yield* q.done(key!)
          break
        }
        case "tick":
          yield* TestClock.adjust(c.millis)
      }
      yield* settleTaker
      assert.strictEqual(yield* q.size, pending.size)
    }
    if (taker !== undefined) yield* Fiber.interrupt(taker)
    for (const key of inFlight.splice(0)) yield* q.done(key)
    yield* TestClock.adjust("1 second")
    const drained = yield* drain(q)
    assert.sameMembers(drained, [...pending.keys()])
    assert.strictEqual(yield* q.size, 0)
  })

describe("WorkQueue model", () => {
  it("for any adds, takes and dones: never out twice, never lost, due keys in order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 120 }), (commands) =>
        Effect.runPromise(Effect.scoped(checkAgainstModel(commands)).pipe(Effect.provide(TestClock.layer())))
      ),
      { numRuns: 400 }
    )
  })
})

describe("WorkQueue scale", () => {
  it.effect(
    "handles 100,000 keys and a million adds",
    () =>
      Effect.gen(function* () {
        const q = yield* queue
        const keys = 100_000
        for (let i = 0; i < 1_000_000; i++) yield* q.add(`key-${(i * 7919) % keys}`, (i * 31) % 1000)
        assert.strictEqual(yield* q.size, keys)
        yield* TestClock.adjust("1 second")
        const drained = yield* drain(q)
        assert.strictEqual(drained.length, keys)
      }),
    60_000
  )
})
