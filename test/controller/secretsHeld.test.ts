import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, readyNode } from "../support/controllerHarness.ts"
import { ApiRequests } from "../support/recordingKubeApi.ts"
import { recordingHarnessLayer } from "../support/recordingKubeApi.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

const secret = (namespace: string, name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { "registry.example.com": { auth: "dTpw" } } })).toString("base64") }
})

describe("the Secrets the controller holds", () => {
  it.effect("are the copies and the sources jobs reference, nothing else; a deleted job's source is read no more", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const { seen } = yield* ApiRequests
      yield* api.create(resources.node, readyNode("n1"))
      for (const ns of ["default", "other"]) for (let i = 0; i < 5; i++) yield* api.create(resources.secret, secret(ns, `s${i}`))
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* simulateDaemons({ pullMs: 1000 })
      yield* advance(31_000)
      // A source is held from its first GET on, and polled with a GET every resync while held.
      const sourceReads = (from: number) =>
        seen.slice(from).filter((r) => r.resource === "secrets" && r.verb === "get" && r.namespace !== defaultSettings.secretNamespace)
      expect(controller.stores.secretCopies.size()).toBe(0)
      expect(sourceReads(0)).toEqual([])
      yield* api.create(resources.imagePullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImagePullJob",
        metadata: { name: "with-secret", namespace: "default" },
        spec: { image: "nginx:1.25", pullSecrets: ["s1"], completionPolicy: { type: "Never" } }
      })
      yield* advance(3000)
      expect([...controller.stores.secretCopies.values()].map((s) => s.metadata.name)).toEqual(["default.s1"])
      const held = seen.length
      yield* advance(3 * defaultSettings.secretResyncMs)
      expect(new Set(sourceReads(0).map((r) => `${r.namespace}/${r.name}`))).toEqual(new Set(["default/s1"]))
      expect(sourceReads(held).length).toBeGreaterThanOrEqual(2)
      yield* api.delete(resources.imagePullJob, { name: "with-secret", namespace: "default" })
      yield* advance(3000)
      expect(controller.stores.secretCopies.size()).toBe(0)
      const forgotten = seen.length
      yield* advance(3 * defaultSettings.secretResyncMs)
      expect(sourceReads(forgotten)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})
