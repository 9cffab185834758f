import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, References } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { Unavailable } from "../../src/kube/errors.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { candidateIdentity, formatMicroTime, makeLeaderElector } from "../../src/kube/leaderElection.ts"
import type { LeaderElector } from "../../src/kube/leaderElection.ts"
import { resources } from "../../src/kube/resources.ts"

const lease = { namespace: "preheat-system", name: "preheat-controller" }
const start = Date.parse("2026-12-02T16:00:00Z")

interface LeaseSpec {
  readonly holderIdentity?: string
  readonly leaseDurationSeconds?: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly leaseTransitions?: number
}

const readLease = KubeApi.use((api) => api.get(resources.lease, lease)).pipe(Effect.map((object) => object.spec as LeaseSpec))

/** A candidate process: its own view of the API (which a test can cut off) and its own elector. */
interface Candidate {
  readonly elector: LeaderElector
  /** whileLeader's starts and interruptions, as [event, time]. */
  readonly terms: Array<["start" | "stop", number]>
  /** Its link to the API server: while down, every request fails with Unavailable. */
  readonly link: { down: boolean }
}

const candidate = (identity: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const link = { down: false }
    const unavailable = Effect.suspend(() => Effect.fail(new Unavailable({ message: `${identity} cut off` })))
    const cutOff = KubeApi.of({
      ...api,
      get: (resource, key) => (link.down ? unavailable : api.get(resource, key)),
      create: (resource, object) => (link.down ? unavailable : api.create(resource, object)),
      update: (resource, object, sub) => (link.down ? unavailable : api.update(resource, object, sub))
    })
    const elector = yield* makeLeaderElector({ ...lease, identity }).pipe(Effect.provideService(KubeApi, cutOff))
    const self: Candidate = { elector, terms: [], link }
    return self
  })

/** Runs c's campaign with a whileLeader that records its terms. */
const campaign = (c: Candidate) =>
  Effect.forkChild(
    c.elector.campaign(
      Effect.gen(function* () {
        const clock = yield* Clock.Clock
        c.terms.push(["start", clock.currentTimeMillisUnsafe()])
        return yield* Effect.never.pipe(
          Effect.onInterrupt(() => Effect.sync(() => c.terms.push(["stop", clock.currentTimeMillisUnsafe()])))
        )
      })
    )
  )

const now = Clock.currentTimeMillis

/** Advances time in small steps until cond holds (or the limit passes); returns the time taken. */
const advanceUntil = (cond: Effect.Effect<boolean>, limitMillis: number, stepMillis = 100) =>
  Effect.gen(function* () {
    const from = yield* now
    while (!(yield* cond) && (yield* now) - from < limitMillis) yield* TestClock.adjust(stepMillis)
    return (yield* now) - from
  })

/** A fresh in-memory API server, the clock at `start`, and quiet logs (outages log every retry). */
const withApi = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.andThen(TestClock.setTime(start), effect).pipe(
    Effect.provide(InMemoryKubeApi.layer),
    Effect.provideService(References.MinimumLogLevel, "Error")
  )

describe("leader election", () => {
  it.effect("the first candidate creates the lease and leads", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        assert.deepStrictEqual(yield* a.elector.status, { _tag: "Unknown" })
        yield* campaign(a)
        yield* TestClock.adjust(0)
        assert.isTrue(yield* a.elector.isLeader)
        assert.deepStrictEqual(yield* a.elector.status, { _tag: "Leading" })
        assert.deepStrictEqual(a.terms, [["start", start]])
        assert.deepStrictEqual(yield* readLease, {
          holderIdentity: "a",
          leaseDurationSeconds: 15,
          acquireTime: "2026-12-02T16:00:00.000000Z",
          renewTime: "2026-12-02T16:00:00.000000Z",
          leaseTransitions: 0
        })
        yield* TestClock.adjust("5 seconds")
        const renewed = yield* readLease
        assert.strictEqual(renewed.renewTime, "2026-12-02T16:00:04.000000Z")
        assert.strictEqual(renewed.acquireTime, "2026-12-02T16:00:00.000000Z")
      })
    )
  )

  it.effect("a second candidate waits while the lease is valid, and knows who leads", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        const b = yield* candidate("b")
        yield* campaign(a)
        yield* TestClock.adjust(0)
        yield* campaign(b)
        yield* TestClock.adjust("1 minute")
        assert.isTrue(yield* a.elector.isLeader)
        assert.isFalse(yield* b.elector.isLeader)
        assert.deepStrictEqual(yield* b.elector.status, { _tag: "Following", holder: "a" })
        assert.deepStrictEqual(b.terms, [])
        assert.strictEqual((yield* readLease).leaseTransitions, 0)
      })
    )
  )

  it.effect("a holder that stops renewing steps down retryPeriod + renewDeadline later; another after leaseDuration", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        const b = yield* candidate("b")
        yield* campaign(a)
        yield* TestClock.adjust(0)
        yield* campaign(b)
        yield* TestClock.adjust("7 seconds")
        // a is cut off from the API (as a hung or partitioned process would be).
        a.link.down = true
        const lastRenew = Date.parse((yield* readLease).renewTime!)
        yield* advanceUntil(
          Effect.map(a.elector.isLeader, (leading) => !leading),
          60_000
        )
        // client-go's rounds: the next one starts retryPeriod after the renewal and lasts renewDeadline.
        assert.strictEqual(yield* now, lastRenew + 12_000)
        assert.deepStrictEqual(
          a.terms.map(([event]) => event),
          ["start", "stop"]
        )
        assert.strictEqual(a.terms[1]![1], lastRenew + 12_000)
        assert.deepStrictEqual(yield* a.elector.status, { _tag: "Unknown" })

        yield* advanceUntil(b.elector.isLeader, 60_000)
        // leaseDuration after b saw the last renewal (at its next retry at most), found at a retry.
        const takeover = (yield* now) - lastRenew
        assert.isAtLeast(takeover, 15_000)
        assert.isAtMost(takeover, 15_000 + 2 * 2_000)
        const spec = yield* readLease
        assert.strictEqual(spec.holderIdentity, "b")
        assert.strictEqual(spec.leaseTransitions, 1)
        assert.strictEqual(spec.acquireTime, formatMicroTime(yield* now))

        // a comes back, sees b's valid lease, and follows.
        a.link.down = false
        yield* TestClock.adjust("5 seconds")
        assert.isFalse(yield* a.elector.isLeader)
        assert.deepStrictEqual(yield* a.elector.status, { _tag: "Following", holder: "b" })
      })
    )
  )

  it.effect("a leader whose renewals fail (API Unavailable) past renewDeadline steps down, and leads again when it can", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        yield* campaign(a)
        yield* TestClock.adjust(0)
        a.link.down = true
        yield* TestClock.adjust("11900 millis")
        assert.isTrue(yield* a.elector.isLeader)
        yield* TestClock.adjust("100 millis")
        assert.isFalse(yield* a.elector.isLeader)
        assert.deepStrictEqual(a.terms, [
          ["start", start],
          ["stop", start + 12_000]
        ])

        a.link.down = false
        yield* TestClock.adjust("2 seconds")
        // Its own unexpired lease: renewed, not a new term for the lease.
        assert.isTrue(yield* a.elector.isLeader)
        assert.strictEqual(a.terms.length, 3)
        const spec = yield* readLease
        assert.strictEqual(spec.leaseTransitions, 0)
        assert.strictEqual(spec.acquireTime, "2026-12-02T16:00:00.000000Z")
      })
    )
  )

  it.effect("a leader whose every write takes 5 s keeps leading; the other candidate never takes over", () =>
    withApi(
      Effect.gen(function* () {
        const api = yield* KubeApi
        // Off again before the assertions: releasing the lease at the end must not wait on the test clock.
        const slowness = { on: true }
        const late = <A, E>(write: Effect.Effect<A, E>) => (slowness.on ? Effect.andThen(Effect.sleep("5 seconds"), write) : write)
        const slow = KubeApi.of({
          ...api,
          create: (resource, object) => late(api.create(resource, object)),
          update: (resource, object, sub) => late(api.update(resource, object, sub))
        })
        const a = yield* candidate("a").pipe(Effect.provideService(KubeApi, slow))
        const b = yield* candidate("b").pipe(Effect.provideService(KubeApi, slow))
        yield* campaign(a)
        yield* TestClock.adjust("5 seconds")
        yield* campaign(b)
        const seen: Array<string> = []
        for (let t = 0; t < 120; t++) {
          yield* TestClock.adjust("1 second")
          seen.push(`${yield* a.elector.isLeader} ${yield* b.elector.isLeader}`)
        }
        slowness.on = false
        assert.deepStrictEqual(
          seen.filter((leaders) => leaders !== "true false"),
          []
        )
        assert.deepStrictEqual(
          a.terms.map(([event]) => event),
          ["start"]
        )
        assert.deepStrictEqual(b.terms, [])
      })
    )
  )

  it.effect("a leader that finds the lease taken over steps down at once", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        yield* campaign(a)
        yield* TestClock.adjust(0)
        const api = yield* KubeApi
        const current = yield* api.get(resources.lease, lease)
        const at = formatMicroTime(yield* now)
        yield* api.update(resources.lease, {
          ...current,
          spec: { holderIdentity: "intruder", leaseDurationSeconds: 15, acquireTime: at, renewTime: at, leaseTransitions: 1 }
        })
        yield* TestClock.adjust("2 seconds")
        assert.isFalse(yield* a.elector.isLeader)
        assert.deepStrictEqual(
          a.terms.map(([event]) => event),
          ["start", "stop"]
        )
        assert.deepStrictEqual(yield* a.elector.status, { _tag: "Following", holder: "intruder" })
      })
    )
  )

  it.effect("closing the leader's scope releases the lease and the other candidate acquires at its next retry", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        const b = yield* candidate("b")
        const aCampaign = yield* campaign(a)
        yield* TestClock.adjust(0)
        yield* campaign(b)
        // b retries at 0, 2, 4 ... s; a stops half a second before b's next retry.
        yield* TestClock.adjust("3500 millis")
        yield* Fiber.interrupt(aCampaign)
        assert.deepStrictEqual(
          a.terms.map(([event]) => event),
          ["start", "stop"]
        )
        const released = yield* readLease
        assert.strictEqual(released.holderIdentity, "")
        assert.strictEqual(released.leaseDurationSeconds, 1)
        assert.strictEqual(released.leaseTransitions, 0)
        const waited = yield* advanceUntil(b.elector.isLeader, 60_000)
        assert.strictEqual(waited, 500)
        const spec = yield* readLease
        assert.strictEqual(spec.holderIdentity, "b")
        assert.strictEqual(spec.leaseTransitions, 1)
      })
    )
  )

  it.effect("a failing whileLeader ends the campaign with its error and releases the lease", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        const fiber = yield* a.elector
          .campaign(Effect.andThen(Effect.sleep("5 seconds"), Effect.fail("controller crashed" as const)))
          .pipe(Effect.forkChild)
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(yield* Effect.flip(Fiber.join(fiber)), "controller crashed")
        assert.isFalse(yield* a.elector.isLeader)
        assert.strictEqual((yield* readLease).holderIdentity, "")
      })
    )
  )

  it.effect("candidates that never led do not touch the lease when they stop", () =>
    withApi(
      Effect.gen(function* () {
        const a = yield* candidate("a")
        const b = yield* candidate("b")
        yield* campaign(a)
        yield* TestClock.adjust(0)
        const bCampaign = yield* campaign(b)
        yield* TestClock.adjust("3 seconds")
        const before = yield* readLease
        yield* Fiber.interrupt(bCampaign)
        assert.deepStrictEqual(yield* readLease, before)
        assert.isTrue(yield* a.elector.isLeader)
      })
    )
  )

  it.effect("rejects timings that would let two leaders overlap", () =>
    Effect.gen(function* () {
      const error = yield* makeLeaderElector({ ...lease, identity: "a", leaseDuration: "10 seconds" }).pipe(
        Effect.flip,
        Effect.provide(InMemoryKubeApi.layer)
      )
      assert.strictEqual(error.message, "leaseDuration must be greater than renewDeadline")
    })
  )

  it.effect("identity is the pod name plus a random suffix", () =>
    Effect.gen(function* () {
      const a = yield* candidateIdentity("preheat-controller-7d9f")
      const b = yield* candidateIdentity("preheat-controller-7d9f")
      assert.match(a, /^preheat-controller-7d9f_[0-9a-f]{8}$/)
      assert.notStrictEqual(a, b)
    })
  )
})

/** For each candidate: API outages as [start s, length s], and when (if ever) it shuts down. */
const schedule = fc.record({
  outages: fc.array(fc.tuple(fc.integer({ min: 0, max: 70 }), fc.integer({ min: 1, max: 20 })), { maxLength: 3 }),
  stopAt: fc.option(fc.integer({ min: 1, max: 119 }), { nil: undefined })
})

describe("leader election under outages", () => {
  it("two candidates never lead at the same instant, and one leads once the API is back", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(schedule, { minLength: 2, maxLength: 3 }), fc.integer({ min: 0, max: 1999 }), (plans, offset) =>
        Effect.gen(function* () {
          const candidates: Array<Candidate> = []
          const violations: Array<string> = []
          const fibers: Array<Fiber.Fiber<never>> = []
          for (const [i] of plans.entries()) candidates.push(yield* candidate(`c${i}`))
          const leaders = Effect.map(
            Effect.forEach(candidates, (c) => c.elector.isLeader),
            (ls) => ls.filter(Boolean).length
          )
          for (const [i, c] of candidates.entries()) {
            fibers.push(
              yield* c.elector
                .campaign(
                  Effect.gen(function* () {
                    // The instant a term starts, nobody else may believe they lead.
                    if ((yield* leaders) !== 1) violations.push(`c${i} started leading while another led`)
                    return yield* Effect.never
                  })
                )
                .pipe(Effect.forkChild)
            )
            // Start the candidates out of step with each other.
            yield* TestClock.adjust(offset)
          }
          for (let t = 0; t < 120_000; t += 250) {
            const s = t / 1000
            for (const [i, plan] of plans.entries()) {
              candidates[i]!.link.down = plan.outages.some(([from, length]) => s >= from && s < from + length)
              if (plan.stopAt === s) yield* Fiber.interrupt(fibers[i]!)
            }
            yield* TestClock.adjust(250)
            if ((yield* leaders) > 1) violations.push(`two leaders at ${t + 250} ms`)
          }
          // A leader that stops late in the schedule releases the lease; the others take it at their
          // next retry, so give them leaseDuration plus a few retries with every link up.
          for (const c of candidates) c.link.down = false
          for (let t = 0; t < 30_000; t += 250) {
            yield* TestClock.adjust(250)
            if ((yield* leaders) > 1) violations.push(`two leaders at ${120_000 + t + 250} ms`)
          }
          assert.deepStrictEqual(violations, [])
          const running = plans.filter((plan) => plan.stopAt === undefined).length
          assert.strictEqual(yield* leaders, running > 0 ? 1 : 0)
        }).pipe(withApi, Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      ),
      {
        numRuns: 40,
        // Found by CI: the leader stopped a second before the schedule's end, too late for a successor.
        examples: [
          [
            [
              { outages: [], stopAt: 119 },
              { outages: [], stopAt: undefined },
              { outages: [], stopAt: undefined }
            ],
            1500
          ]
        ]
      }
    )
  }, 120_000)
})
