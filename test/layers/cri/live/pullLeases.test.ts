import { assert, describe, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { GrpcCallFailed } from "../../../../layers/cri/live/grpcCalls.ts"
import { type LeaseApi, makePullLeases, pullLeaseLabel, pullLeaseLabels } from "../../../../layers/cri/live/pullLeases.ts"

/** containerd's lease service as a list of leases, and the calls made to it. */
const fakeLeases = (failCreate?: number) => {
  const leases = new Map<string, Readonly<Record<string, string>>>()
  const calls: Array<string> = []
  const api: LeaseApi = {
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
      assert.strictEqual(leases.size, 0)
      // Another image gets a lease of its own; the kept one is taken once only.
      const other = yield* pulls.acquire("web:2")
      assert.notStrictEqual(other, first)
      assert.deepStrictEqual(calls, ["create app:1", "delete app:1", "create web:2"])
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

  it.effect("closing the layer deletes the kept leases", () =>
    Effect.gen(function* () {
      const { api, leases } = fakeLeases()
      const scope = yield* Scope.make()
      const pulls = yield* makePullLeases(api, options).pipe(Scope.provide(scope))
      const lease = yield* pulls.acquire("app:1")
      yield* pulls.release("app:1", lease!, false)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(leases.size, 0)
    })
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
