/**
 * The peer-to-peer mirror of `preheat dev --p2p` (harness/layers/simulatedRuntime/peerMirror.ts) on simulated
 * time: nodes pulling one image together all go to the registry, a node pulling after another
 * holds the image fetches it from that peer at the peers' speed, a layer is offered once complete
 * (not while another node downloads it), a removed image or a node gone offers nothing, and the
 * registry counts what it served per image.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber, Layer, Result, Scope } from "effect"
import { TestClock } from "effect/testing"
import { parseImageReference } from "../../../../src/api/imageReference.ts"
import { CriRuntime } from "../../../../src/cri/CriRuntime.ts"
import { PeerMirror, simulatedLayers } from "../../../../harness/layers/simulatedRuntime/peerMirror.ts"
import { SimulatedRuntime } from "../../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { simulatedImageSize, simulatedNodeLayer } from "../../../../harness/layers/simulatedRuntime/simulatedNode.ts"

const mebibyte = 1024 * 1024
// 256 MiB at 64 MiB/s from the registry (4 s), 256 MiB/s from a peer (1 s): two layers of 128 MiB.
const size = 256 * mebibyte
const image = "registry.example.com/app:1"
const overhead = Duration.millis(100)

const mirrorOf = () => new PeerMirror({ registryBytesPerSecond: 64 * mebibyte, peerBytesPerSecond: 256 * mebibyte })

/** A node's runtime on the mirror, built in `scope` (closing it is the node leaving). */
const nodeOn = (mirror: PeerMirror, node: string, scope: Scope.Scope) =>
  Effect.map(
    Layer.buildWithScope(SimulatedRuntime.layer({ defaultSize: size, peerMirror: { mirror, node, overhead } }), scope),
    (context) => Context.get(context, SimulatedRuntime)
  )

const pull = (node: SimulatedRuntime["Service"], timeout = Duration.minutes(5)) =>
  Effect.forkChild(node.runtime.pullImage({ image, timeout }))

const servedOf = (mirror: PeerMirror) => {
  const [served] = mirror.snapshot().images
  return { registry: (served?.registryBytes ?? 0) / mebibyte, peers: (served?.peerBytes ?? 0) / mebibyte, pulls: served?.pulls ?? 0 }
}

describe("the peer mirror of preheat dev --p2p", () => {
  it.effect("sends nodes that start together to the registry, each for the whole image", () =>
    Effect.gen(function* () {
      const mirror = mirrorOf()
      const scope = yield* Effect.scope
      const nodes = yield* Effect.forEach(["a", "b", "c"], (name) => nodeOn(mirror, name, scope))
      const fibers = yield* Effect.forEach(nodes, (n) => pull(n))
      yield* TestClock.adjust(Duration.millis(4100))
      for (const fiber of fibers) assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
      assert.deepStrictEqual(servedOf(mirror), { registry: 768, peers: 0, pulls: 3 })
    })
  )

  it.effect("serves a node that starts after another holds the image from that peer, faster", () =>
    Effect.gen(function* () {
      const mirror = mirrorOf()
      const scope = yield* Effect.scope
      const [seed, other] = yield* Effect.forEach(["seed", "other"], (name) => nodeOn(mirror, name, scope))
      const first = yield* pull(seed!)
      yield* TestClock.adjust(Duration.millis(4100))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      const second = yield* pull(other!)
      // 100 ms of manifest and 1 s of peer transfer: done well before the registry's 4 s.
      yield* TestClock.adjust(Duration.millis(1100))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(second)))
      assert.deepStrictEqual(servedOf(mirror), { registry: 256, peers: 256, pulls: 2 })
      const [served] = mirror.snapshot().images
      assert.strictEqual(served?.image, "registry.example.com/app:1")
      assert.strictEqual((served?.lastEnd ?? 0) - (served?.firstStart ?? 0), 5200)
    })
  )

  it.effect("offers a layer once a node completed it, not while it downloads it", () =>
    Effect.gen(function* () {
      const mirror = mirrorOf()
      const scope = yield* Effect.scope
      const [early, late] = yield* Effect.forEach(["early", "late"], (name) => nodeOn(mirror, name, scope))
      const first = yield* pull(early!)
      // 2.5 s in, `early` has its first layer (at 2.1 s) and is downloading its second (until 4.1 s).
      yield* TestClock.adjust(Duration.millis(2500))
      const second = yield* pull(late!)
      yield* TestClock.adjust(Duration.millis(10_000))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(second)))
      // early: 256 from the registry; late: the first layer from early, the second (not whole on early yet) from the registry.
      assert.deepStrictEqual(servedOf(mirror), { registry: 384, peers: 128, pulls: 2 })
    })
  )

  it.effect("fetches nothing for an image the node holds, and offers nothing once it is removed or the node left", () =>
    Effect.gen(function* () {
      const mirror = mirrorOf()
      const scope = yield* Effect.scope
      const leaving = yield* Scope.fork(scope)
      const a = yield* nodeOn(mirror, "a", scope)
      const gone = yield* nodeOn(mirror, "gone", leaving)
      const fetched = yield* pull(gone)
      yield* TestClock.adjust(Duration.millis(4100))
      yield* Fiber.join(fetched)
      // Pulled again (imagePullPolicy Always): every layer is on the node already.
      const again = yield* pull(gone)
      yield* TestClock.adjust(Duration.millis(100))
      yield* Fiber.join(again)
      assert.deepStrictEqual(servedOf(mirror), { registry: 256, peers: 0, pulls: 1 })
      yield* Scope.close(leaving, Exit.void)
      const fromRegistry = yield* pull(a)
      yield* TestClock.adjust(Duration.millis(4100))
      yield* Fiber.join(fromRegistry)
      assert.deepStrictEqual(servedOf(mirror), { registry: 512, peers: 0, pulls: 2 })
      yield* a.runtime.removeImage(image)
      const b = yield* nodeOn(mirror, "b", scope)
      const afterRemoval = yield* pull(b)
      yield* TestClock.adjust(Duration.millis(4100))
      yield* Fiber.join(afterRemoval)
      assert.deepStrictEqual(servedOf(mirror), { registry: 768, peers: 0, pulls: 3 })
    })
  )

  it.effect("lets the request's deadline cut a pull short, counting what was sent, offering only whole layers", () =>
    Effect.gen(function* () {
      const mirror = mirrorOf()
      const scope = yield* Effect.scope
      const [slow, next] = yield* Effect.forEach(["slow", "next"], (name) => nodeOn(mirror, name, scope))
      const cut = yield* pull(slow!, Duration.millis(3100))
      yield* TestClock.adjust(Duration.millis(3100))
      const exit = yield* Fiber.await(cut)
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "DeadlineExceeded")
      // 3 s at 64 MiB/s were sent; the first layer was whole, but the image never made it: not offered.
      assert.deepStrictEqual(servedOf(mirror), { registry: 192, peers: 0, pulls: 1 })
      const whole = yield* pull(next!)
      yield* TestClock.adjust(Duration.millis(4100))
      yield* Fiber.join(whole)
      assert.strictEqual(servedOf(mirror).registry, 192 + 256)
    })
  )

  it("splits an image into layers of 128 MiB at most 8, and sizes a size-N repository by its name", () => {
    const layers = simulatedLayers("sha256:abc", 1024 * mebibyte, (t) => t)
    assert.deepStrictEqual(
      layers.map((l) => l.size / mebibyte),
      [128, 128, 128, 128, 128, 128, 128, 128]
    )
    assert.deepStrictEqual(
      simulatedLayers("sha256:abc", 200 * mebibyte + 1, (t) => t).map((l) => l.size),
      [100 * mebibyte, 100 * mebibyte + 1]
    )
    const ref = (text: string) => {
      const parsed = parseImageReference(text)
      if (Result.isFailure(parsed)) throw parsed.failure
      return parsed.success
    }
    assert.strictEqual(simulatedImageSize(ref("bench.example/size-1gi:run-1")), 1024 * mebibyte)
    assert.strictEqual(simulatedImageSize(ref("bench.example/team/size-300mi:a")), 300 * mebibyte)
    const made = simulatedImageSize(ref("bench.example/size-1gib:a"))
    assert.isTrue(made >= 20 * mebibyte && made <= 250 * mebibyte)
  })

  it.effect("a dev node on the mirror pulls a 1 GiB image in 8 layers at the registry link's 50 MB/s", () =>
    Effect.gen(function* () {
      const mirror = new PeerMirror({ registryBytesPerSecond: 50_000_000, peerBytesPerSecond: 250_000_000 })
      const runtime = yield* CriRuntime.pipe(Effect.provide(simulatedNodeLayer({ peers: { mirror, node: "node-1" } })))
      const fiber = yield* Effect.forkChild(runtime.pullImage({ image: "bench.example/size-1gi:a", timeout: Duration.minutes(5) }))
      yield* TestClock.adjust(Duration.seconds(23))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
      const [served] = mirror.snapshot().images
      assert.strictEqual(served?.registryBytes, 1024 * mebibyte)
      // 200 ms of manifest, then 8 layers of 128 MiB at 50 MB/s: 1000 + 1000 + 685 ms each.
      assert.strictEqual((served?.lastEnd ?? 0) - (served?.firstStart ?? 0), 200 + 8 * 2685)
    })
  )
})
