/**
 * What `preheat dev --p2p`'s simulated registry served, published (harness/cluster/devMirror.ts)
 * on the in-memory API server and simulated time: the ConfigMap simulated-registry-served follows
 * the mirror's counts within a second, and each image gets one line once its pulls are quiet.
 */
import { describe, expect, it } from "@effect/vitest"
import { resources } from "../../../src/kube/resources.ts"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../../harness/layers/inMemoryKubeApi.ts"
import { publishServed, servedConfigMap, servedLine } from "../../../harness/cluster/devMirror.ts"
import { PeerMirror } from "../../../harness/layers/simulatedRuntime/peerMirror.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"

const gib = 1024 ** 3

describe("the dev cluster's registry counts", () => {
  it.effect("writes the counts to a ConfigMap as they move, and prints a line per image once its pulls are quiet", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
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
      const data = (yield* api.get(resources.configMap, servedConfigMap))["data"] as Record<string, string>
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
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(InMemoryKubeApi.layer)))
  )
})
