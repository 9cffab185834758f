// A cluster OpenKruise's controller ran, taken over by preheat's (issue 26 item 5), on the in-memory
// API server and TestClock: what upstream's controller leaves on a job and in the copies' namespace
// is taken over, never left stuck or orphaned. The whole switch, with the separate processes and
// NodeImages as upstream's daemon leaves them, is test/system/migration.system.ts.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, inVersion, readyNode, startCluster } from "../support/controllerHarness.ts"

const copies = defaultSettings.secretNamespace
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
const data = (user: string) => ({
  ".dockerconfigjson": b64(JSON.stringify({ auths: { "registry.example.com": { auth: b64(`${user}:pw`) } } }))
})

const source = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default" },
  type: "kubernetes.io/dockerconfigjson",
  data: data("u")
})

// As upstream's generateSyncedSecret writes it (pkg/controller/imagepulljob/imagepulljob_controller.go).
const upstreamCopy = (name: string, sourceKey: string, references: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name,
    namespace: copies,
    annotations: {
      "imagepulljobs.kruise.io/source-key": sourceKey,
      "imagepulljobs.kruise.io/references": references,
      "imagepulljobs.kruise.io/mode": "batch"
    }
  },
  type: "kubernetes.io/dockerconfigjson",
  data: data("old")
})

const job = (name: string, spec: Record<string, unknown>, finalizers: ReadonlyArray<string> = []): KubeObject => ({
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", finalizers: [...finalizers] },
  spec
})

const absent = (resource: Parameters<typeof get>[0], name: string, namespace: string) =>
  get(resource, name, namespace).pipe(
    Effect.as(false),
    Effect.catchTag("NotFound", () => Effect.succeed(true))
  )

describe("taking over from OpenKruise's controller", () => {
  it.effect("a job OpenKruise protected with its finalizer can still be deleted", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 60_000 })
      const api = yield* KubeApi
      yield* api.create(
        inVersion(resources.imagePullJob, "v1beta1"),
        job("running", { image: "nginx:1", completionPolicy: { type: "Never" } }, ["apps.kruise.io/deletion-protection"])
      )
      yield* advance(3000)
      expect((yield* get(resources.imagePullJob, "running", "default")).metadata.finalizers).toEqual(["preheat.kruise.io/release-tags"])
      yield* api.delete(resources.imagePullJob, { name: "running", namespace: "default" })
      yield* advance(2000)
      expect(yield* absent(resources.imagePullJob, "running", "default")).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("OpenKruise's copies: kept while a job they name runs, deleted when it finishes; orphans deleted at once", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.secret, source("registry"))
      yield* api.create(resources.secret, upstreamCopy("registry-a1b2c3", "default/registry", "default/running,default/gone"))
      yield* api.create(resources.secret, upstreamCopy("registry-d4e5f6", "default/registry", "default/gone"))
      // Not a copy (no source annotation): never touched.
      yield* api.create(resources.secret, { ...source("unrelated"), metadata: { name: "unrelated", namespace: copies } })
      // The NodeImage upstream's controller made: the job has its node from the start.
      yield* api.create(inVersion(resources.nodeImage, "v1beta1"), {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "NodeImage",
        metadata: { name: "n1" },
        spec: {}
      })
      yield* api.create(inVersion(resources.imagePullJob, "v1beta1"), job("running", { image: "nginx:1", pullSecrets: ["registry"] }))
      yield* startCluster([readyNode("n1")], { pullMs: 45_000 })
      const kept = yield* get(resources.secret, "registry-a1b2c3", copies)
      expect(kept.metadata.annotations?.["imagepulljobs.kruise.io/references"]).toBe("default/running")
      expect(kept["data"]).toEqual(data("u"))
      expect(yield* absent(resources.secret, "registry-d4e5f6", copies)).toBe(true)
      expect((yield* get(resources.secret, "default.registry", copies)).metadata.annotations).toMatchObject({
        "imagepulljobs.kruise.io/source-key": "default/registry",
        "imagepulljobs.kruise.io/references": "default/running"
      })
      yield* advance(30_000)
      expect((yield* get(resources.imagePullJob, "running", "default"))["status"]).toMatchObject({ succeeded: 1 })
      expect(yield* absent(resources.secret, "registry-a1b2c3", copies)).toBe(true)
      expect(yield* absent(resources.secret, "default.registry", copies)).toBe(true)
      expect(yield* absent(resources.secret, "unrelated", copies)).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
