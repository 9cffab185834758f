/**
 * `preheat dev`'s node simulator (kwok's idea) on the in-memory API server, in real time: a Node
 * created by hand (as with kubectl apply) becomes a simulated node, reported Ready, whose daemon
 * pulls its NodeImage's tags through its own runtime; deleted, it goes with its runtime, and
 * created again it starts afresh.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { InMemoryKubeApi } from "../../../harness/layers/inMemoryKubeApi.ts"
import { simulateNodes } from "../../../harness/cluster/nodeSimulator.ts"
import { WorkQueuesLive } from "../../../layers/workQueues.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { Metrics } from "../../../src/ops/metrics.ts"

const layer = Layer.mergeAll(InMemoryKubeApi.layer, WorkQueuesLive.layer(), Metrics.layerTest)

/** Polls until `check` gives a value (30 s at most). */
const until = <A, R>(what: string, check: Effect.Effect<A | undefined, unknown, R>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1500; i++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep(Duration.millis(20))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

const conditions = (o: { readonly [k: string]: unknown }) =>
  ((o["status"] as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []) as Array<{
    type: string
    status: string
  }>

describe("the dev cluster's node simulator", () => {
  it.live("a Node created by hand joins with a daemon and a runtime; deleted, it leaves; created again, it starts afresh", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const { runtimes } = yield* simulateNodes(new Map())
      yield* api.create(resources.node, {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "joined" },
        spec: { taints: [{ key: "preheat.kruise.io/warming", effect: "NoSchedule" }] }
      })
      const first = yield* until(
        "a runtime for the node",
        Effect.sync(() => runtimes.get("joined"))
      )
      const ready = yield* until(
        "the node Ready",
        Effect.map(api.get(resources.node, { name: "joined" }), (n) =>
          conditions(n).some((c) => c.type === "Ready" && c.status === "True") ? n : undefined
        )
      )
      // Taints stay as written: the simulator only reports the kubelet's status.
      expect(ready["spec"]).toEqual({ taints: [{ key: "preheat.kruise.io/warming", effect: "NoSchedule" }] })

      // Its daemon pulls what its NodeImage asks, through its own runtime.
      yield* api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "NodeImage",
        metadata: { name: "joined" },
        spec: { images: { "library/busybox": { tags: [{ tag: "1.36", version: 0 }] } } }
      })
      yield* until(
        "the tag pulled",
        Effect.map(api.get(resources.nodeImage, { name: "joined" }), (n) => {
          const tags = (n["status"] as { imageStatuses?: Record<string, { tags: Array<{ phase: string }> }> } | undefined)?.imageStatuses?.[
            "library/busybox"
          ]?.tags
          return tags?.[0]?.phase === "Succeeded" ? true : undefined
        })
      )
      expect(Option.isSome(yield* first.imageStatus("busybox:1.36"))).toBe(true)

      yield* api.delete(resources.node, { name: "joined" })
      yield* until(
        "the node gone",
        Effect.sync(() => (runtimes.has("joined") ? undefined : true))
      )
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: "joined" } })
      const second = yield* until(
        "a new runtime for the node",
        Effect.sync(() => runtimes.get("joined"))
      )
      expect(second).not.toBe(first)
      expect(Option.isNone(yield* second.imageStatus("busybox:1.36"))).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(layer))
  )
})
