import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { recordEvent, withEventCorrelation } from "../../src/kube/events.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

const job: KubeObject = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "job", namespace: "ns", uid: "uid-job" }
}

describe("recordEvent", () => {
  it.effect("events in the same instant from two recorders all get names of their own", () =>
    Effect.gen(function* () {
      const controller = recordEvent("preheat-controller")
      const daemon = recordEvent("preheat-daemon")
      for (let i = 0; i < 20; i++) {
        yield* controller(job, { type: "Normal", reason: "Started", message: `${i}` })
        yield* daemon(job, { type: "Normal", reason: "Pulled", message: `${i}` })
      }
      const events = (yield* (yield* KubeApi).list(resources.event, { namespace: "ns" })).items
      assert.strictEqual(events.length, 40)
      for (const event of events) assert.match(event.metadata.name ?? "", /^job\.[0-9a-f]+$/)
      // Read as v1alpha1, referred to by the version kubectl resolves the kind to.
      assert.deepStrictEqual(events[0]?.["involvedObject"], {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "ImagePullJob",
        name: "job",
        namespace: "ns",
        uid: "uid-job"
      })
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("a message is escaped and cut to 1024 characters, whoever built it", () =>
    Effect.gen(function* () {
      yield* recordEvent("preheat-controller")(job, {
        type: "Warning",
        reason: "Failed",
        message: `x\x1b]0;t\x07\u202e${"y".repeat(5000)}`
      })
      const [event] = (yield* (yield* KubeApi).list(resources.event, { namespace: "ns" })).items
      const message = event?.["message"] as string
      assert.isTrue(message.startsWith("x\\x1b]0;t\\a\\u202eyyy"))
      assert.isTrue(message.endsWith("y..."))
      assert.strictEqual(message.length, 1024 + 3)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("with a correlation, a repeated event is one Event whose count and lastTimestamp a patch moves", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const record = recordEvent("preheat-daemon")
      const failed = { type: "Warning", reason: "PullImageFailed", message: "manifest unknown" } as const
      yield* withEventCorrelation(
        Effect.gen(function* () {
          yield* TestClock.setTime(1_000)
          yield* record(job, failed)
          yield* TestClock.setTime(61_000)
          yield* record(job, failed)
          yield* record(job, failed)
          const [first, ...others] = (yield* api.list(resources.event, { namespace: "ns" })).items
          assert.strictEqual(others.length, 0)
          assert.strictEqual(first?.["count"], 3)
          assert.strictEqual(first?.["firstTimestamp"], "1970-01-01T00:00:01Z")
          assert.strictEqual(first?.["lastTimestamp"], "1970-01-01T00:01:01Z")
          // Deleted meanwhile (the API server's TTL): the patch finds nothing and the Event is made again.
          yield* api.delete(resources.event, { namespace: "ns", name: first?.metadata.name ?? "" })
          yield* record(job, failed)
          const [again] = (yield* api.list(resources.event, { namespace: "ns" })).items
          assert.strictEqual(again?.metadata.name, first?.metadata.name)
          assert.strictEqual(again?.["count"], 4)
          assert.strictEqual(again?.["firstTimestamp"], "1970-01-01T00:00:01Z")
        })
      )
      // Each correlation is its own (a restarted daemon, another leader's term): the first event is created anew.
      yield* withEventCorrelation(record(job, failed))
      assert.strictEqual((yield* api.list(resources.event, { namespace: "ns" })).items.length, 2)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("with a correlation, a component's events about one object stop after a burst of 25", () =>
    Effect.gen(function* () {
      const record = recordEvent("preheat-controller")
      yield* withEventCorrelation(
        Effect.forEach(
          Array.from({ length: 40 }, (_, i) => i),
          (i) => record(job, { type: "Warning", reason: "NodeFailed", message: `node-${i}` }),
          {
            discard: true
          }
        )
      )
      const events = (yield* (yield* KubeApi).list(resources.event, { namespace: "ns" })).items
      // Nine on their own, then the combined one, counting the other 16 the bucket let through.
      assert.strictEqual(events.length, 10)
      const combined = events.find((e) => String(e["message"]).startsWith("(combined from similar events): "))
      assert.strictEqual(combined?.["count"], 16)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
