/**
 * What `preheat dev --p2p`'s simulated registry served, published (harness/cluster/devMirror.ts)
 * on the in-memory API server and simulated time: the ConfigMap simulated-registry-served follows
 * the mirror's counts within a second, each image gets one line once its pulls are quiet, and the
 * counters of dev's /metrics give the ConfigMap's totals.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { resources } from "../../../src/kube/resources.ts"
import { Context, Duration, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../../harness/layers/inMemoryKubeApi.ts"
import { publishServed, servedConfigMap, servedLine } from "../../../harness/cluster/devMirror.ts"
import { PeerMirror } from "../../../harness/layers/simulatedRuntime/peerMirror.ts"
import { SimulatedRuntime } from "../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import { Metrics } from "../../../src/ops/metrics.ts"

const gib = 1024 ** 3
const mebibyte = 1024 ** 2

const servedData = Effect.gen(function* () {
  const api = yield* KubeApi
  return (yield* api.get(resources.configMap, servedConfigMap))["data"] as Record<string, string>
})

describe("the dev cluster's registry counts", () => {
  it.effect("writes the counts to a ConfigMap as they move, and prints a line per image once its pulls are quiet", () =>
    Effect.gen(function* () {
      const mirror = new PeerMirror({ registryBytesPerSecond: 50_000_000, peerBytesPerSecond: 250_000_000 })
      const lines: Array<string> = []
      yield* publishServed(mirror, (line) => Effect.sync(() => void lines.push(line)))
      const image = "bench.example/size-1gi:a"
      mirror.pullStarted(image, 0)
      mirror.count(image, "registry", gib)
      mirror.pullEnded(image, 21_680)
      mirror.pullStarted(image, 21_900)
      mirror.count(image, "peer", gib)
      mirror.pullEnded(image, 26_400)
      yield* TestClock.adjust("1100 millis")
      const data = yield* servedData
      expect(data["registryBytes"]).toBe(String(gib))
      expect(data["peerBytes"]).toBe(String(gib))
      expect(JSON.parse(data["images"] ?? "[]")).toEqual([
        { image, registryBytes: gib, peerBytes: gib, pulls: 2, ended: 2, firstStart: 0, lastEnd: 26_400 }
      ])
      expect(lines).toEqual([])
      yield* TestClock.adjust("4 seconds")
      expect(lines).toEqual([
        "simulated registry: bench.example/size-1gi:a: 1.00 GiB from the registry, 1.00 GiB from peers, 2 pulls, first pull to last 26.4s"
      ])
      // Nothing new: no new line, however long.
      yield* TestClock.adjust("1 minute")
      expect(lines).toHaveLength(1)
      expect(servedLine({ image, registryBytes: 0, peerBytes: 0, pulls: 0, ended: 0, firstStart: undefined, lastEnd: undefined })).toBe(
        "simulated registry: bench.example/size-1gi:a: 0.00 GiB from the registry, 0.00 GiB from peers, 0 pulls"
      )
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(InMemoryKubeApi.layer, Metrics.layerTest)))
  )

  it.effect("counts on the metrics what the ConfigMap says the registry and the peers served, as pulls go on", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      // 256 MiB at 64 MiB/s from the registry (4 s), at 256 MiB/s from a peer (1 s).
      const mirror = new PeerMirror({ registryBytesPerSecond: 64 * mebibyte, peerBytesPerSecond: 256 * mebibyte })
      yield* publishServed(mirror, () => Effect.void)
      const scope = yield* Effect.scope
      const [seed, other, third] = yield* Effect.forEach(["seed", "other", "third"], (node) =>
        Effect.map(
          Layer.buildWithScope(
            SimulatedRuntime.layer({ defaultSize: 256 * mebibyte, peerMirror: { mirror, node, overhead: Duration.millis(100) } }),
            scope
          ),
          (context) => Context.get(context, SimulatedRuntime).runtime
        )
      )
      const pull = (runtime: NonNullable<typeof seed>, image: string) =>
        Effect.forkChild(runtime.pullImage({ image, timeout: Duration.minutes(5) }))
      const counted = Effect.gen(function* () {
        const data = yield* servedData
        return {
          configMap: { registry: Number(data["registryBytes"]), peers: Number(data["peerBytes"]) },
          metrics: {
            registry: yield* metrics.read("preheat_simulated_registry_served_bytes_total"),
            peers: yield* metrics.read("preheat_simulated_peer_served_bytes_total")
          }
        }
      })

      // The seed from the registry; then the two others from it, and a second image from the registry.
      const first = yield* pull(seed!, "registry.example.com/app:1")
      yield* TestClock.adjust(Duration.millis(4100))
      assert(Exit.isSuccess(yield* Fiber.await(first)))
      yield* TestClock.adjust(Duration.millis(1000))
      const mib = (bytes: number) => ({ registry: bytes * mebibyte, peers: 0 })
      expect(yield* counted).toEqual({ configMap: mib(256), metrics: mib(256) })
      const more = yield* Effect.all([
        pull(other!, "registry.example.com/app:1"),
        pull(third!, "registry.example.com/app:1"),
        pull(seed!, "registry.example.com/app:2")
      ])
      // Part way (the registry counts each second of a transfer): the metrics have every count at once,
      // the ConfigMap those up to its last write; it catches up at its next one.
      yield* TestClock.adjust(Duration.millis(2400))
      const partWay = { registry: (256 + 128) * mebibyte, peers: 2 * 256 * mebibyte }
      expect(yield* counted).toEqual({ configMap: { ...partWay, registry: (256 + 64) * mebibyte }, metrics: partWay })
      yield* TestClock.adjust(Duration.millis(600))
      expect(yield* counted).toEqual({ configMap: partWay, metrics: partWay })
      yield* TestClock.adjust(Duration.millis(2000))
      for (const fiber of more) assert(Exit.isSuccess(yield* Fiber.await(fiber)))
      const done = { registry: 2 * 256 * mebibyte, peers: 2 * 256 * mebibyte }
      expect(yield* counted).toEqual({ configMap: done, metrics: done })
      // Read again with nothing new: a counter that only goes up stays put.
      expect((yield* counted).metrics).toEqual(done)
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(InMemoryKubeApi.layer, Metrics.layerTest)))
  )
})
