import { assert, describe, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Deferred, Duration, Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { GrpcCallFailed } from "../../../../layers/cri/live/grpcCalls.ts"
import { type LeaseApi, makePullLeases, pullLeaseLabel, pullLeaseLabels } from "../../../../layers/cri/live/pullLeases.ts"

/** containerd's lease service as a list of leases (`left`: there at start), and the calls made to it. */
const fakeLeases = (failCreate?: number, left: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> = []) => {
  const leases = new Map<string, Readonly<Record<string, string>>>(left)
  const calls: Array<string> = []
  const api: LeaseApi = {
    list: Effect.sync(() => [...leases].map(([id, labels]) => ({ id, labels }))),
    exists: (id) => Effect.sync(() => leases.has(id)),
    create: (id, labels) =>
      Effect.suspend(() => {
        calls.push(`create ${labels[pullLeaseLabel]}`)
        if (failCreate !== undefined) {
          return Effect.fail(new GrpcCallFailed({ method: "Create", code: failCreate, details: undefined, text: `code ${failCreate}` }))
        }
        leases.set(id, labels)
        return Effect.void
      }),
    remove: (id) =>
      Effect.sync(() => {
        calls.push(`delete ${leases.get(id)?.[pullLeaseLabel]}`)
        leases.delete(id)
      })
  }
  return { api, leases, calls }
}

const options = { keepFor: Duration.hours(1), sweepEvery: Duration.minutes(5) }

describe("the leases pulls are made under", () => {
  it.effect("a failed pull's lease is taken by the next pull of the image; a pull that succeeds deletes it", () =>
    Effect.gen(function* () {
      const { api, leases, calls } = fakeLeases()
      const pulls = yield* makePullLeases(api, options)
      const first = yield* pulls.acquire("app:1")
      assert.isDefined(first)
      yield* pulls.release("app:1", first!, false)
      assert.strictEqual(yield* pulls.acquire("app:1"), first)
      yield* pulls.release("app:1", first!, true)
      yield* Effect.yieldNow
      assert.strictEqual(leases.size, 0)
      // Another image gets a lease of its own; the kept one is taken once only.
      const other = yield* pulls.acquire("web:2")
      assert.notStrictEqual(other, first)
      assert.deepStrictEqual(calls, ["create app:1", "delete app:1", "create web:2"])
    }).pipe(Effect.scoped)
  )

  it.effect("a pull that succeeded does not wait for its lease's deletion", () =>
    Effect.gen(function* () {
      const { api, leases, calls } = fakeLeases()
      const answered = yield* Deferred.make<void>()
      const slowDelete: LeaseApi = { ...api, remove: (id) => Effect.andThen(Deferred.await(answered), api.remove(id)) }
      const pulls = yield* makePullLeases(slowDelete, options)
      const lease = yield* pulls.acquire("app:1")
      yield* pulls.release("app:1", lease!, true)
      assert.strictEqual(leases.size, 1)
      yield* Deferred.succeed(answered, undefined)
      yield* Effect.yieldNow
      assert.strictEqual(leases.size, 0)
      assert.deepStrictEqual(calls, ["create app:1", "delete app:1"])
    }).pipe(Effect.scoped)
  )

  it.effect("a kept lease not taken again within an hour is deleted; the image's next pull starts afresh", () =>
    Effect.gen(function* () {
      const { api, leases } = fakeLeases()
      const pulls = yield* makePullLeases(api, options)
      const lease = yield* pulls.acquire("app:1")
      yield* pulls.release("app:1", lease!, false)
      yield* TestClock.adjust("55 minutes")
      assert.strictEqual(leases.size, 1)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(leases.size, 0)
      assert.notStrictEqual(yield* pulls.acquire("app:1"), lease)
    }).pipe(Effect.scoped)
  )

  it.effect("a second failed pull of an image replaces the lease kept for it", () =>
    Effect.gen(function* () {
      const { api, leases } = fakeLeases()
      const pulls = yield* makePullLeases(api, options)
      const a = yield* pulls.acquire("app:1")
      const b = yield* pulls.acquire("app:1")
      yield* pulls.release("app:1", a!, false)
      yield* pulls.release("app:1", b!, false)
      assert.deepStrictEqual([...leases.keys()], [b])
      assert.strictEqual(yield* pulls.acquire("app:1"), b)
    }).pipe(Effect.scoped)
  )

  it.effect("kept leases outlive the daemon: the next one takes them for its pulls, and deletes the unused an hour on", () =>
    Effect.gen(function* () {
      const { api, leases } = fakeLeases()
      const scope = yield* Scope.make()
      const before = yield* makePullLeases(api, options).pipe(Scope.provide(scope))
      const a = yield* before.acquire("app:1")
      const b = yield* before.acquire("web:2")
      yield* before.release("app:1", a!, false)
      yield* before.release("web:2", b!, false)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(leases.size, 2)
      // A daemon that died mid-pull left nothing kept in memory, only its lease.
      leases.set("preheat-pull-cut", { [pullLeaseLabel]: "db:3" })
      leases.set("someone-elses", { "containerd.io/gc.expire": "2026-12-07T00:00:00Z" })
      const after = yield* makePullLeases(api, options)
      assert.strictEqual(yield* after.acquire("app:1"), a)
      assert.strictEqual(yield* after.acquire("db:3"), "preheat-pull-cut")
      yield* TestClock.adjust("65 minutes")
      assert.deepStrictEqual([...leases.keys()].sort(), [a, "preheat-pull-cut", "someone-elses"].sort())
    }).pipe(Effect.scoped)
  )

  it.effect("a kept lease gone meanwhile is replaced by a new one: a pull never names a lease containerd no longer has", () =>
    Effect.gen(function* () {
      const { api, leases } = fakeLeases()
      const pulls = yield* makePullLeases(api, options)
      const lease = yield* pulls.acquire("app:1")
      yield* pulls.release("app:1", lease!, false)
      leases.delete(lease!)
      const next = yield* pulls.acquire("app:1")
      assert.isDefined(next)
      assert.notStrictEqual(next, lease)
      assert.isTrue(leases.has(next!))
    }).pipe(Effect.scoped)
  )

  it.effect("a runtime without containerd's lease service (UNIMPLEMENTED) gets no lease, and is not asked again", () =>
    Effect.gen(function* () {
      const { api, calls } = fakeLeases(grpc.status.UNIMPLEMENTED)
      const pulls = yield* makePullLeases(api, options)
      assert.isUndefined(yield* pulls.acquire("app:1"))
      assert.isUndefined(yield* pulls.acquire("app:1"))
      assert.deepStrictEqual(calls, ["create app:1"])
    }).pipe(Effect.scoped)
  )

  it.effect("another failure to create one costs that pull its lease only", () =>
    Effect.gen(function* () {
      const { api, calls } = fakeLeases(grpc.status.UNAVAILABLE)
      const pulls = yield* makePullLeases(api, options)
      assert.isUndefined(yield* pulls.acquire("app:1"))
      assert.isUndefined(yield* pulls.acquire("app:1"))
      assert.deepStrictEqual(calls, ["create app:1", "create app:1"])
    }).pipe(Effect.scoped)
  )

  it("a lease expires a day on, in RFC 3339 as containerd's garbage collector reads it, and names its image", () => {
    assert.deepStrictEqual(pullLeaseLabels("docker.io/library/nginx:1.25", Date.parse("2026-12-06T00:07:40.123Z")), {
      "containerd.io/gc.expire": "2026-12-07T00:07:40Z",
      [pullLeaseLabel]: "docker.io/library/nginx:1.25"
    })
  })
})
