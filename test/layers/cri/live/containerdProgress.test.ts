import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { type ContainerdApi, makePullTracker } from "../../../../layers/cri/live/containerdProgress.ts"
import { GrpcCallFailed } from "../../../../layers/cri/live/grpcCalls.ts"
import type { ContentInfo, IngestStatus } from "../../../../layers/cri/live/grpcPackages.ts"
import type { PullProgress } from "../../../../src/cri/CriRuntime.ts"

/**
 * The tracker against a containerd that is a few maps: the lease's content, the content store and
 * the in-flight ingests, changed by the test between readings (one a second).
 */

const digest = (c: string) => `sha256:${c.repeat(64)}`
const config = { digest: digest("c"), size: 100 }
const layer = { digest: digest("e"), size: 900 }
const image = "registry.example/app:1"
const source = { "containerd.io/distribution.source.registry.example": "app" }

const manifestOf = (blobs: { readonly config: typeof config; readonly layers: ReadonlyArray<typeof layer> }) =>
  Buffer.from(JSON.stringify({ schemaVersion: 2, config: blobs.config, layers: blobs.layers }))

const fakeContainerd = () => {
  const lease: Array<string> = []
  const store = new Map<string, { info: ContentInfo; bytes: Buffer }>()
  const ingests: Array<IngestStatus> = []
  let failing = false
  const add = (d: string, bytes: Buffer, labels: Record<string, string> = {}, createdSeconds = 0) => {
    store.set(d, { info: { digest: d, size: bytes.length, created_at: { seconds: createdSeconds, nanos: 0 }, labels }, bytes })
    lease.push(d)
  }
  const fail = <A>(a: A) =>
    failing ? Effect.fail(new GrpcCallFailed({ method: "x", code: 14, details: undefined, text: "unavailable" })) : Effect.succeed(a)
  const api: ContainerdApi = {
    leaseResources: () => Effect.suspend(() => fail(lease.map((id) => ({ id, type: "content" })))),
    ingests: Effect.suspend(() => fail([...ingests])),
    info: (d) => Effect.suspend(() => fail(Option.fromNullishOr(store.get(d)?.info))),
    read: (d) => Effect.suspend(() => fail(store.get(d)?.bytes ?? Buffer.alloc(0)))
  }
  return {
    api,
    add,
    ingests,
    setFailing: (value: boolean) => {
      failing = value
    }
  }
}

/** Starts a tracked pull that ends when the test says; its reports as [done, total, percent, awaitingBytes]. */
const trackedPull = (api: ContainerdApi, lease: string | undefined) =>
  Effect.gen(function* () {
    const seen: Array<readonly [number, number, number, boolean | undefined]> = []
    const report = (p: PullProgress) => Effect.sync(() => void seen.push([p.bytesDone, p.bytesTotal, p.percent, p.awaitingBytes]))
    const done = yield* Deferred.make<string>()
    const tracker = makePullTracker(api, { interval: Duration.seconds(1) })
    const fiber = yield* Effect.forkChild(tracker.track(image, lease, Deferred.await(done), report))
    yield* settle
    return { seen, end: Effect.andThen(Deferred.succeed(done, "sha256:id"), Fiber.join(fiber)) }
  })

/** Lets the tracker's fibers run their readings. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const second = Effect.andThen(TestClock.adjust("1 second"), settle)

describe("containerd's byte progress: when bytes are awaited (the stall clock's signal)", () => {
  it.effect("from the start: before the manifest, while a blob is written; not once all are in", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      const pull = yield* trackedPull(containerd.api, "lease-1")
      // Resolving with the registry, before any reading.
      assert.deepStrictEqual(pull.seen, [[0, 0, 0, true]])
      // Nothing in the lease yet a second in: the same, not said again.
      yield* second
      assert.deepStrictEqual(pull.seen, [[0, 0, 0, true]])
      containerd.add(digest("d"), manifestOf({ config, layers: [layer] }), source)
      containerd.add(config.digest, Buffer.alloc(config.size))
      containerd.ingests.push({ ref: `layer-${layer.digest}`, offset: 300, total: 900, expected: "" })
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [400, 1000, 40, true])
      // The layer is in; unpacking follows, and shows no bytes.
      containerd.ingests.length = 0
      containerd.add(layer.digest, Buffer.alloc(0))
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [1000, 1000, 99, false])
      yield* pull.end
      assert.deepStrictEqual(pull.seen.at(-1), [1000, 1000, 100, false])
    })
  )

  it.effect("a layer whose ingest is written to its size is not awaited (committing)", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      containerd.add(digest("d"), manifestOf({ config, layers: [layer] }), source)
      containerd.add(config.digest, Buffer.alloc(config.size))
      containerd.ingests.push({ ref: `layer-${layer.digest}`, offset: 900, total: 900, expected: "" })
      const pull = yield* trackedPull(containerd.api, "lease-1")
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [1000, 1000, 99, false])
      yield* pull.end
    })
  )

  it.effect("a lease holding only another repository's manifest is not watched", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      containerd.add(digest("d"), manifestOf({ config, layers: [layer] }), {
        "containerd.io/distribution.source.registry.example": "other"
      })
      const pull = yield* trackedPull(containerd.api, "lease-1")
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [0, 0, 0, false])
      yield* pull.end
    })
  )

  it.effect("a reading that fails says nothing of bytes awaited: what cannot be seen is not watched", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      const pull = yield* trackedPull(containerd.api, "lease-1")
      assert.strictEqual(pull.seen.at(-1)?.[3], true)
      containerd.setFailing(true)
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [0, 0, 0, undefined])
      containerd.setFailing(false)
      yield* second
      assert.strictEqual(pull.seen.at(-1)?.[3], true)
      yield* pull.end
    })
  )

  it.effect("a pull over within the first second costs containerd no reading", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      let readings = 0
      const counted: ContainerdApi = {
        ...containerd.api,
        leaseResources: (lease) =>
          Effect.andThen(
            Effect.sync(() => readings++),
            containerd.api.leaseResources(lease)
          )
      }
      const pull = yield* trackedPull(counted, "lease-1")
      yield* TestClock.adjust("999 millis")
      yield* pull.end
      assert.strictEqual(readings, 0)
      assert.deepStrictEqual(pull.seen, [
        [0, 0, 0, true],
        [0, 0, 100, false]
      ])
    })
  )

  it.effect("without a lease (no lease service): 0, then 100, and never a word of bytes awaited", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      const pull = yield* trackedPull(containerd.api, undefined)
      yield* second
      yield* pull.end
      assert.deepStrictEqual(pull.seen, [
        [0, 0, 0, undefined],
        [0, 0, 100, undefined]
      ])
    })
  )

  it.effect("two manifests of the image under one lease (the tag moved between attempts): the newer one counts", () =>
    Effect.gen(function* () {
      const containerd = fakeContainerd()
      const stale = { digest: digest("f"), size: 5000 }
      // The first attempt's manifest, its layer left half written; the second attempt's, newer.
      containerd.add(digest("a"), manifestOf({ config, layers: [stale] }), source, 100)
      containerd.ingests.push({ ref: `layer-${stale.digest}`, offset: 2000, total: 5000, expected: "" })
      containerd.add(digest("b"), manifestOf({ config, layers: [layer] }), source, 200)
      containerd.add(config.digest, Buffer.alloc(config.size))
      containerd.add(layer.digest, Buffer.alloc(0))
      const pull = yield* trackedPull(containerd.api, "lease-1")
      yield* second
      assert.deepStrictEqual(pull.seen.at(-1), [1000, 1000, 99, false])
      yield* pull.end
    })
  )
})
