/**
 * `preheat dev`'s node simulator (kwok's idea) on the in-memory API server, in real time: a Node
 * created by hand (as with kubectl apply) becomes a simulated node, reported Ready, whose daemon
 * pulls its NodeImage's tags through its own runtime; deleted, it goes with its runtime, and
 * created again it starts afresh.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../../harness/layers/inMemoryKubeApi.ts"
import { simulateNodes } from "../../../harness/cluster/nodeSimulator.ts"
import { tagRevisions } from "../../../harness/cluster/devRegistry.ts"
import { SchedulerLive } from "../../../layers/scheduler.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { Metrics } from "../../../src/ops/metrics.ts"
import { defaultDaemonOptions } from "../../../src/daemon/options.ts"

const layer = Layer.mergeAll(InMemoryKubeApi.layer, SchedulerLive.layer(), Metrics.layerTest)

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
        apiVersion: "apps.kruise.io/v1alpha1",
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

describe("the dev cluster's nodeStatusMaxImages", () => {
  const statusOf = (image: string) =>
    Effect.map(
      Effect.flatMap(Effect.service(KubeApi), (api) => api.get(resources.nodeImage, { name: "n1" })),
      (n) => {
        const statuses = (
          n["status"] as { imageStatuses?: Record<string, { tags: Array<{ phase: string; unreported?: boolean }> }> } | undefined
        )?.imageStatuses
        return statuses?.[image]?.tags[0]
      }
    )

  it.effect("its kubelets list that many images and its daemons judge by the same cap: the smaller image's tag is marked", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* simulateNodes(new Map(), { minFreeDisk: defaultDaemonOptions.minFreeDisk, nodeStatusMaxImages: 1 })
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: "n1" } })
      const tags = { tags: [{ tag: "1", version: 0 }] }
      yield* api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: "n1" },
        spec: { images: { "registry.example.com/size-100mi": tags, "registry.example.com/size-20mi": tags } }
      })
      // Pulled in seconds, listed by the kubelet within 10 s, judged 20 s after the pull (the simulated kubelet's lag).
      for (let i = 0; i < 60; i++) {
        for (let j = 0; j < 10; j++) yield* Effect.yieldNow
        yield* TestClock.adjust(1000)
      }
      const listed = (yield* api.get(resources.node, { name: "n1" }))["status"] as {
        images: ReadonlyArray<{ names: ReadonlyArray<string> }>
      }
      expect(listed.images.flatMap((i) => i.names).filter((name) => !name.includes("@"))).toEqual(["registry.example.com/size-100mi:1"])
      expect(yield* statusOf("registry.example.com/size-20mi")).toMatchObject({ phase: "Succeeded", unreported: true })
      expect((yield* statusOf("registry.example.com/size-100mi"))?.unreported).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(layer))
  )
})

describe("the dev cluster's simulated registry", () => {
  it("reads each ConfigMap entry as a push to a tag, names normalised; a digest or a bad reference is a problem", () => {
    const { problems, revisions } = tagRevisions({
      "push-2": "nginx:latest",
      "push-1": "docker.io/library/nginx",
      other: "registry.example.com/app:1",
      pinned: `nginx@sha256:${"a".repeat(64)}`,
      bad: "Not A Reference"
    })
    expect([...revisions].sort()).toEqual([
      ["docker.io/library/nginx:latest", "push-1,push-2"],
      ["registry.example.com/app:1", "other"]
    ])
    expect(problems).toHaveLength(2)
    expect(problems.join("; ")).toContain("entry pinned")
    expect(problems.join("; ")).toContain("entry bad")
  })

  it.live("a ConfigMap entry moves a tag for every simulated node: pulled again, it resolves to a new digest", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* simulateNodes(new Map())
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: "n1" } })
      const tag = (version: number) => ({ images: { nginx: { tags: [{ tag: "latest", version, imagePullPolicy: "Always" }] } } })
      const digestAt = (version: number) =>
        until(
          `version ${version} pulled`,
          Effect.map(api.get(resources.nodeImage, { name: "n1" }), (n) => {
            const status = (
              n["status"] as
                | { imageStatuses?: Record<string, { tags: Array<{ phase: string; version?: number; digest?: string }> }> }
                | undefined
            )?.imageStatuses?.["nginx"]?.tags[0]
            return status?.phase === "Succeeded" && status.version === version ? status.digest : undefined
          })
        )
      yield* api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: "n1" },
        spec: tag(0)
      })
      const first = yield* digestAt(0)
      expect(first).toMatch(/^sha256:[a-f0-9]{64}$/)
      yield* api.create(resources.configMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "simulated-registry", namespace: "default" },
        data: { "push-1": "nginx:latest" }
      })
      // The registry follows the ConfigMap through a watch: pull again until the move shows.
      let version = 0
      const moved = yield* until(
        "the moved digest",
        Effect.gen(function* () {
          version++
          yield* api.patch(resources.nodeImage, { name: "n1" }, { spec: tag(version) })
          const digest = yield* digestAt(version)
          return digest !== first ? digest : undefined
        })
      )
      expect(moved).toMatch(/^sha256:[a-f0-9]{64}$/)
      yield* api.delete(resources.configMap, { name: "simulated-registry", namespace: "default" })
      const back = yield* until(
        "the first digest again",
        Effect.gen(function* () {
          version++
          yield* api.patch(resources.nodeImage, { name: "n1" }, { spec: tag(version) })
          const digest = yield* digestAt(version)
          return digest === first ? digest : undefined
        })
      )
      expect(back).toBe(first)
    }).pipe(Effect.scoped, Effect.provide(layer))
  )
})
