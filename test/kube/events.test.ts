import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { recordEvent } from "../../src/kube/events.ts"
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
})
