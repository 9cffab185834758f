// The controller reads a source Secret with one GET at a time, whoever asks: a second GET while a
// throttled one waits for its Retry-After is the early retry the server asked not to get.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { makeSourceSecrets } from "../../src/controller/pullSecrets/sourceSecrets.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

/** The in-memory API server whose Secret GETs take a second and are counted. */
const slowSecretGets = (gets: { count: number }) =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const api = yield* KubeApi
      return KubeApi.of({
        ...api,
        get: (resource, key) =>
          resource.kind === "Secret"
            ? Effect.sync(() => gets.count++).pipe(Effect.andThen(Effect.sleep("1 second")), Effect.andThen(api.get(resource, key)))
            : api.get(resource, key)
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer))

const regcred = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "regcred", namespace: "default" },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { "registry.example.com": { auth: "dTpw" } } })).toString("base64") }
}

describe("source secrets", () => {
  it.effect("reads and resyncs that overlap share one GET of a secret", () => {
    const gets = { count: 0 }
    return Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.secret, regcred)
      const secrets = makeSourceSecrets()
      const readers = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(secrets.read("default", "regcred")))
      yield* TestClock.adjust("1 second")
      const read = yield* Effect.forEach(readers, Fiber.join)
      assert.strictEqual(gets.count, 1)
      assert.deepStrictEqual(
        read.map((secret) => secret?.metadata.name),
        ["regcred", "regcred", "regcred"]
      )

      const resyncs = yield* Effect.forEach([1, 2], () => Effect.forkChild(secrets.resync))
      yield* TestClock.adjust("1 second")
      yield* Effect.forEach(resyncs, Fiber.join)
      assert.strictEqual(gets.count, 2)
    }).pipe(Effect.provide(slowSecretGets(gets)))
  })
})
