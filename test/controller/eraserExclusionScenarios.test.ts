// eraser's exclusion list end to end on the in-memory API server with simulated daemons, on
// TestClock (issue 39): with --eraser-exclusion-namespace, one ConfigMap there lists the images
// Never jobs keep warm, follows them as they come and go, and goes with the last of them.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exclusionDataKey, exclusionListName } from "../../src/controller/eraserExclusion/decide.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"
import { ApiRequests, recordingHarnessLayer } from "../support/recordingKubeApi.ts"

const namespace = "eraser-system"
const digest = `sha256:${"c".repeat(64)}`

const job = (name: string, image: string, policy: "Never" | "Always" = "Never"): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, parallelism: 10, completionPolicy: { type: policy } }
})

/** The list's ConfigMap, if there is one (a GET: the controller's reads are its list and watch). */
const theList = Effect.gen(function* () {
  const api = yield* KubeApi
  return yield* api
    .get(resources.configMap, { name: exclusionListName, namespace })
    .pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
})

const excluded = (configMap: KubeObject | undefined): ReadonlyArray<string> | undefined => {
  const text = (configMap?.["data"] as Record<string, string> | undefined)?.[exclusionDataKey]
  return text === undefined ? undefined : (JSON.parse(text) as { excluded: ReadonlyArray<string> }).excluded
}

describe("eraser's exclusion list, on an in-memory cluster", () => {
  it.effect("follows the Never jobs: created with the first, rewritten as they change, deleted with the last", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 }, { eraserExclusionNamespace: namespace })
      const api = yield* KubeApi
      expect(yield* theList).toBeUndefined()
      yield* api.create(resources.imagePullJob, job("once", "busybox:1", "Always"))
      yield* advance(5000)
      // An Always job keeps nothing warm.
      expect(yield* theList).toBeUndefined()
      yield* api.create(resources.imagePullJob, job("web", "nginx:1.25"))
      yield* advance(5000)
      const first = yield* theList
      expect(first?.metadata.labels).toEqual({ "eraser.sh/exclude.list": "true", "app.kubernetes.io/managed-by": "preheat" })
      expect(excluded(first)).toEqual(["docker.io/library/nginx:1.25"])
      yield* api.create(resources.imagePullJob, job("cache", "ghcr.io/team/cache:7"))
      yield* advance(5000)
      expect(excluded(yield* theList)).toEqual(["docker.io/library/nginx:1.25", "ghcr.io/team/cache:7"])
      yield* api.delete(resources.imagePullJob, { name: "web", namespace: "default" })
      yield* advance(5000)
      expect(excluded(yield* theList)).toEqual(["ghcr.io/team/cache:7"])
      yield* api.delete(resources.imagePullJob, { name: "cache", namespace: "default" })
      yield* advance(5000)
      expect(yield* theList).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("lists the digests the nodes resolved; no write while only progress moves, nor for a job adding no entry", () =>
    Effect.gen(function* () {
      yield* startCluster(
        [readyNode("n1"), readyNode("n2")],
        { pullMs: 20_000, digest: () => digest },
        { eraserExclusionNamespace: namespace }
      )
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("web", "nginx:1.25"))
      yield* advance(5000)
      const pulling = yield* theList
      expect(excluded(pulling)).toEqual(["docker.io/library/nginx:1.25"])
      yield* advance(10_000)
      // Another job of the same image wakes the list, which is the same text: not rewritten.
      yield* api.create(resources.imagePullJob, job("web-too", "docker.io/library/nginx:1.25"))
      yield* advance(3000)
      // Progress reports came and went: the list is the same object, never rewritten.
      expect((yield* theList)?.metadata.resourceVersion).toBe(pulling?.metadata.resourceVersion)
      yield* advance(20_000)
      expect(excluded(yield* theList)).toEqual(["docker.io/library/nginx:1.25", digest])
      // Two writes in all (the list, then its digest); read by its name only, as RBAC grants it.
      const requests = (yield* ApiRequests).seen.filter((r) => r.resource === "configmaps" && r.verb !== "get")
      const writes = requests.filter((r) => r.verb !== "list" && r.verb !== "watch")
      expect(writes.map((r) => r.verb)).toEqual(["create", "update"])
      for (const read of requests.filter((r) => r.verb === "list" || r.verb === "watch")) {
        expect(read).toMatchObject({ namespace, fieldSelector: `metadata.name=${exclusionListName}` })
      }
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("an ImageListPullJob's Never children count; its list is made again if deleted by hand", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 }, { eraserExclusionNamespace: namespace })
      const api = yield* KubeApi
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "base", namespace: "default" },
        spec: { images: ["redis:7", "nginx:1.25"], completionPolicy: { type: "Never" } }
      })
      yield* advance(8000)
      expect(excluded(yield* theList)).toEqual(["docker.io/library/nginx:1.25", "docker.io/library/redis:7"])
      yield* api.delete(resources.configMap, { name: exclusionListName, namespace })
      yield* advance(3000)
      expect(excluded(yield* theList)).toEqual(["docker.io/library/nginx:1.25", "docker.io/library/redis:7"])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("leaves a ConfigMap of that name it does not manage, and every other ConfigMap, alone", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const foreign: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: exclusionListName, namespace, labels: { "eraser.sh/exclude.list": "true" } },
        data: { "mine.json": '{"excluded": ["docker.io/library/*"]}' }
      }
      const other: KubeObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "eraser-manager-config", namespace },
        data: { a: "b" }
      }
      const created = yield* api.create(resources.configMap, foreign)
      const untouched = yield* api.create(resources.configMap, other)
      yield* startCluster([readyNode("n1")], { pullMs: 1000 }, { eraserExclusionNamespace: namespace })
      yield* api.create(resources.imagePullJob, job("web", "nginx:1.25"))
      yield* advance(5000)
      expect(yield* theList).toEqual(created)
      expect(yield* api.get(resources.configMap, { name: "eraser-manager-config", namespace })).toEqual(untouched)
      const events = yield* api.list(resources.event, { namespace })
      const warning = events.items.find((e) => e["reason"] === "ExclusionListNotOwned")
      expect(warning?.["type"]).toBe("Warning")
      expect(String(warning?.["message"])).toContain(`ConfigMap ${namespace}/${exclusionListName} exists and is not managed by preheat`)
      // One warning for that version, however many jobs change.
      yield* api.create(resources.imagePullJob, job("cache", "redis:7"))
      yield* advance(5000)
      const again = yield* api.list(resources.event, { namespace })
      expect(again.items.filter((e) => e["reason"] === "ExclusionListNotOwned").map((e) => e["count"] ?? 1)).toEqual([1])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("without the flag, no list", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("web", "nginx:1.25"))
      yield* advance(5000)
      // Not even watched: without the flag, RBAC grants nothing on ConfigMaps.
      expect((yield* ApiRequests).seen.filter((r) => r.resource === "configmaps")).toEqual([])
      expect((yield* api.list(resources.configMap, {})).items).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})
