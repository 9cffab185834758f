import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { EventRetention } from "../../../../harness/apiserver/storage/eventRetention.ts"
import { recordEvent } from "../../../../src/kube/events.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../../src/kube/KubeApi.ts"
import { resources } from "../../../../src/kube/resources.ts"

const job = (name: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", uid: `uid-${name}` }
})

const record = recordEvent("preheat-controller")

const eventMessages = Effect.gen(function* () {
  const events = (yield* (yield* KubeApi).list(resources.event, { namespace: "default" })).items
  return events.map((e) => String(e["message"])).sort((a, b) => Number(a) - Number(b))
})

describe("Events in the embedded API server", () => {
  it.effect("are deleted an hour after they were created (kube-apiserver's --event-ttl), watchers told", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const { resourceVersion } = yield* api.list(resources.event, {})
      const deleted = yield* api.watch(resources.event, { resourceVersion }).pipe(
        Stream.filter((e) => e.type === "DELETED"),
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild
      )
      yield* record(job("old"), { type: "Normal", reason: "Started", message: "1" })
      yield* TestClock.adjust("59 minutes")
      yield* record(job("newer"), { type: "Normal", reason: "Started", message: "2" })
      assert.deepStrictEqual(yield* eventMessages, ["1", "2"])
      yield* TestClock.adjust("1 minute")
      yield* record(job("newest"), { type: "Normal", reason: "Started", message: "3" })
      assert.deepStrictEqual(yield* eventMessages, ["2", "3"])
      const [gone] = yield* Fiber.join(deleted)
      assert.strictEqual(gone?.type === "DELETED" ? gone.object["message"] : undefined, "1")
    }).pipe(Effect.provide(InMemoryKubeApi.layerWith()))
  )

  it.effect("are kept up to a count, oldest deleted first", () =>
    Effect.gen(function* () {
      for (let i = 1; i <= 30; i++) yield* record(job(`j${i}`), { type: "Normal", reason: "Started", message: `${i}` })
      assert.deepStrictEqual(yield* eventMessages, ["26", "27", "28", "29", "30"])
    }).pipe(Effect.provide(InMemoryKubeApi.layerWith({ eventLimits: { count: 5 } })))
  )

  it.effect("are kept up to a size in bytes of JSON, oldest deleted first", () =>
    Effect.gen(function* () {
      for (let i = 1; i <= 30; i++) yield* record(job(`j${i}`), { type: "Normal", reason: "Started", message: `${i}`.padEnd(1000, ".") })
      const kept = yield* eventMessages
      // Each Event is a little over 1,400 bytes of JSON: 3 fit in 5,000 bytes.
      assert.deepStrictEqual(
        kept.map((m) => m.replaceAll(".", "")),
        ["28", "29", "30"]
      )
    }).pipe(Effect.provide(InMemoryKubeApi.layerWith({ eventLimits: { bytes: 5000 } })))
  )

  it("remember no more than their bounds, whatever was deleted meanwhile", () => {
    const retention = new EventRetention({ ttlMs: 3_600_000, count: 100, bytes: 1_000_000 })
    for (let i = 0; i < 100_000; i++) {
      retention.added(`default/e${i}`, `uid-${i}`, i, 500)
      retention.due(i)
    }
    assert.deepStrictEqual(retention.held, { count: 100, bytes: 50_000 })
  })
})
