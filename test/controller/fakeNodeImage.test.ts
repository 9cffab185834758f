/**
 * Upstream's e2e tests (test/e2e/framework/v1beta1/nodeimage_util.go) create a NodeImage named
 * `fake-nodeimage`, labelled `apps.kruise.io/fake-nodeimage`, that no Node backs, and expect every
 * job that selects it to put its tags there and finish: the NodeImage controller leaves it alone.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, inVersion, readyNode, startCluster } from "../support/controllerHarness.ts"

const fakeNodeImage: KubeObject = {
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "NodeImage",
  metadata: { name: "fake-nodeimage", labels: { "apps.kruise.io/fake-nodeimage": "true" } }
}

describe("upstream's fake NodeImage", () => {
  it.effect("stays although no Node has its name, and a job that selects it pulls there and completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 100 })
      const api = yield* KubeApi
      yield* api.create(inVersion(resources.nodeImage, "v1beta1"), fakeNodeImage)
      yield* api.create(inVersion(resources.imagePullJob, "v1beta1"), {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "ImagePullJob",
        metadata: { name: "j", namespace: "default" },
        spec: { image: "registry.example.com/app:v1", completionPolicy: { type: "Always" } }
      })
      yield* advance(60_000)
      const fake = yield* get(resources.nodeImage, "fake-nodeimage")
      expect(fake.metadata.labels).toEqual({ "apps.kruise.io/fake-nodeimage": "true" })
      expect(Object.keys((fake["spec"] as { images?: object }).images ?? {})).toEqual(["registry.example.com/app"])
      const job = yield* get(resources.imagePullJob, "j", "default")
      expect(job["status"]).toMatchObject({ desired: 2, succeeded: 2 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
