import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { runControllerRole } from "../../src/controller/role.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeMetrics, Metrics } from "../../src/ops/metrics.ts"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { advance, get, readyNode } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

const replica = (identity: string, metrics: Metrics["Service"]) =>
  runControllerRole({
    settings: defaultSettings,
    leaderElection: { namespace: "preheat-system", name: "preheat-controller", identity },
    metrics: { host: "127.0.0.1", port: 0 }
  }).pipe(Effect.scoped, Effect.provide(SchedulerLive.layerWithMetrics.pipe(Layer.provideMerge(Layer.succeed(Metrics, metrics)))))

const reconciles = (metrics: Metrics["Service"]) => metrics.read("preheat_reconciles_total")

const job = (name: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image: "nginx:1.9.1" }
})

const holder = Effect.map(
  get(resources.lease, "preheat-controller", "preheat-system"),
  (lease) => (lease["spec"] as { holderIdentity?: string }).holderIdentity
)

describe("controller replicas", () => {
  it.effect("exactly one reconciles; stopping it hands over within the lease time", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.node, readyNode("n1"))
      yield* simulateDaemons({ pullMs: 1000 })
      const metricsA = makeMetrics({ processMetrics: false })
      const metricsB = makeMetrics({ processMetrics: false })
      const a = yield* Effect.forkChild(replica("replica-a", metricsA), { startImmediately: true })
      yield* advance(1000)
      const b = yield* Effect.forkChild(replica("replica-b", metricsB), { startImmediately: true })
      yield* advance(35_000)
      expect(yield* holder).toBe("replica-a")
      expect((yield* api.list(resources.nodeImage)).items).toHaveLength(1)
      expect(yield* metricsA.read("preheat_leader")).toBe(1)
      expect(yield* metricsB.read("preheat_leader")).toBe(0)
      expect(yield* reconciles(metricsA)).toBeGreaterThan(0)
      expect(yield* reconciles(metricsB)).toBe(0)

      yield* api.create(resources.imagePullJob, job("first"))
      yield* advance(3000)
      expect((yield* get(resources.imagePullJob, "first", "default"))["status"]).toMatchObject({ succeeded: 1 })

      // SIGTERM: the campaign ends and releases the Lease; the other replica takes over at its next retry.
      yield* Fiber.interrupt(a)
      yield* advance(3000)
      expect(yield* holder).toBe("replica-b")
      yield* api.create(resources.imagePullJob, job("second"))
      yield* advance(3000)
      expect((yield* get(resources.imagePullJob, "second", "default"))["status"]).toMatchObject({ succeeded: 1 })
      expect(yield* reconciles(metricsB)).toBeGreaterThan(0)
      yield* Fiber.interrupt(b)
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(InMemoryKubeApi.layer, SchedulerLive.layer())))
  )
})
