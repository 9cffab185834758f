import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { advance, get, harnessLayer, readyNode, startCluster, unadmitted } from "../support/controllerHarness.ts"

const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec
})

const status = (o: KubeObject) => o["status"] as Record<string, unknown> | undefined

describe("controller on an in-memory cluster", () => {
  it.effect("creates a NodeImage per Ready node after the delay", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("node-1", { zone: "a" }), readyNode("node-2")], { pullMs: 1000 })
      const api = yield* KubeApi
      const list = yield* api.list(resources.nodeImage)
      expect(list.items.map((n) => [n.metadata.name, n.metadata.labels?.["zone"]])).toEqual([
        ["node-1", "a"],
        ["node-2", undefined]
      ])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("runs an Always job on all nodes, one at a time, to completion", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1"), readyNode("n2"), readyNode("n3")], { pullMs: 5000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("always", { image: "nginx:1.9.1", parallelism: 1 }))
      yield* advance(4000)
      const running = yield* get(resources.imagePullJob, "always", "default")
      expect(status(running)).toMatchObject({ desired: 3, active: 1, succeeded: 0 })
      yield* advance(12_000)
      const done = yield* get(resources.imagePullJob, "always", "default")
      expect(status(done)).toMatchObject({ desired: 3, active: 0, succeeded: 3, failed: 0, message: "job has completed" })
      expect([...pulls.values()]).toEqual([1, 1, 1])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  // The in-memory cluster admits writes as an API server with the CRDs does: the task's tag, a
  // 135-character digest, once passed the NodeImage schema's tag bound (128) and was refused.
  it.effect("a job pinned to a sha512 digest: its task fits the NodeImage schema and the job completes", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      const digest = `sha512:${"ab".repeat(64)}`
      yield* api.create(resources.imagePullJob, job("pinned", { image: `nginx@${digest}` }))
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "pinned", "default"))).toMatchObject({ succeeded: 1, message: "job has completed" })
      expect([...pulls.values()]).toEqual([1])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})

const secret = (name: string, data: Record<string, string>, type = "kubernetes.io/dockerconfigjson"): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default" },
  type,
  data
})

/** A usable docker config (pullSecrets/sourceSecrets.ts copies no other), base64 as a Secret's data holds it. */
const dockerConfig = (user: string) =>
  Buffer.from(JSON.stringify({ auths: { "registry.example.com": { auth: Buffer.from(`${user}:pw`).toString("base64") } } })).toString(
    "base64"
  )

const tagsOf = (nodeImage: KubeObject, image: string) =>
  (
    nodeImage["spec"] as {
      images?: Record<string, { tags: Array<{ tag: string; ownerReferences?: Array<{ uid: string; apiVersion: string; name: string }> }> }>
    }
  ).images?.[image]?.tags ?? []

describe("upstream end-to-end scenarios, on the in-memory cluster", () => {
  it.effect("a job with a pull secret: copy created, tracked, released after TTL deletion", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", { ".dockerconfigjson": dockerConfig("u") }))
      yield* api.create(
        resources.imagePullJob,
        job("with-secret", {
          image: "registry.example.com/app:1",
          parallelism: 2,
          pullSecrets: ["registry"],
          completionPolicy: { ttlSecondsAfterFinished: 60 }
        })
      )
      yield* advance(1000)
      const copy = yield* get(resources.secret, "default.registry", "preheat-daemon-config")
      expect(copy.metadata.annotations).toMatchObject({
        "preheat.kruise.io/source-namespace": "default",
        "preheat.kruise.io/source-name": "registry",
        "preheat.kruise.io/referenced-by": "default/with-secret"
      })
      expect(copy["data"]).toEqual({ ".dockerconfigjson": dockerConfig("u") })
      const node = yield* get(resources.nodeImage, "n1")
      const entry = (node["spec"] as { images: Record<string, { pullSecrets?: unknown }> }).images["registry.example.com/app"]
      expect(entry?.pullSecrets).toEqual([{ namespace: "preheat-daemon-config", name: "default.registry" }])
      yield* advance(5000)
      expect(status(yield* get(resources.imagePullJob, "with-secret", "default"))).toMatchObject({ succeeded: 2 })
      yield* advance(62_000)
      const gone = yield* Effect.flip(get(resources.imagePullJob, "with-secret", "default"))
      expect(gone._tag).toBe("NotFound")
      const copyGone = yield* Effect.flip(get(resources.secret, "default.registry", "preheat-daemon-config"))
      expect(copyGone._tag).toBe("NotFound")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a deleted job's secret reference leaves the image another job still pulls", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", { ".dockerconfigjson": dockerConfig("u") }))
      // Never jobs: still running when one is deleted (an Always job that completed has released its copies already).
      const never = { completionPolicy: { type: "Never" } }
      yield* api.create(resources.imagePullJob, job("with-secret", { image: "nginx:1", pullSecrets: ["registry"], ...never }))
      yield* api.create(resources.imagePullJob, job("without", { image: "nginx:1", ...never }))
      yield* advance(3000)
      const entry = (o: KubeObject) =>
        (o["spec"] as { images: Record<string, { pullSecrets?: unknown; tags: Array<unknown> }> }).images["nginx"]
      expect(entry(yield* get(resources.nodeImage, "n1"))?.pullSecrets).toEqual([
        { namespace: "preheat-daemon-config", name: "default.registry" }
      ])
      yield* api.delete(resources.imagePullJob, { name: "with-secret", namespace: "default" })
      yield* advance(1000)
      const after = entry(yield* get(resources.nodeImage, "n1"))
      expect(after?.tags).toHaveLength(1)
      expect(after?.pullSecrets).toBeUndefined()
      const copyGone = yield* Effect.flip(get(resources.secret, "default.registry", "preheat-daemon-config"))
      expect(copyGone._tag).toBe("NotFound")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  for (const type of ["Never", "Always"] as const) {
    it.effect(`a ${type} job whose secret changes: the copy follows within seconds (a poll, not 30 s)`, () =>
      Effect.gen(function* () {
        // The Always job's pulls take long enough that it is still running when the secret changes.
        yield* startCluster([readyNode("n1")], { pullMs: 60_000 })
        const api = yield* KubeApi
        const source = yield* api.create(resources.secret, secret("registry", { ".dockerconfigjson": dockerConfig("u") }))
        yield* api.create(resources.imagePullJob, job("rotated", { image: "nginx", pullSecrets: ["registry"], completionPolicy: { type } }))
        yield* advance(3000)
        yield* api.update(resources.secret, { ...source, data: { ".dockerconfigjson": dockerConfig("rotated") } })
        // Within a few seconds: the poll's interval (5 s) and a reconcile.
        yield* advance(6000)
        const copy = yield* get(resources.secret, "default.registry", "preheat-daemon-config")
        expect(copy["data"]).toEqual({ ".dockerconfigjson": dockerConfig("rotated") })
        expect(status(yield* get(resources.imagePullJob, "rotated", "default"))?.["completionTime"]).toBeUndefined()
      }).pipe(Effect.scoped, Effect.provide(harnessLayer))
    )
  }

  it.effect("an Always job on one named node; its tag goes promptly when the job is deleted", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("named", { image: "busybox:1.29.2", selector: { names: ["n2"] } }))
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "named", "default"))).toMatchObject({
        desired: 1,
        succeeded: 1,
        message: "job has completed"
      })
      expect([...pulls.keys()]).toEqual(["n2/busybox:1.29.2"])
      expect(tagsOf(yield* get(resources.nodeImage, "n2"), "busybox")).toHaveLength(1)
      yield* api.delete(resources.imagePullJob, { name: "named", namespace: "default" })
      yield* advance(1000)
      expect(tagsOf(yield* get(resources.nodeImage, "n2"), "busybox")).toEqual([])
      expect((yield* Effect.flip(get(resources.imagePullJob, "named", "default")))._tag).toBe("NotFound")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a Never job on all nodes never completes and picks up a new node", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(
        resources.imagePullJob,
        job("forever", { image: "nginx", parallelism: "100%", completionPolicy: { type: "Never" } })
      )
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "forever", "default"))).toMatchObject({
        desired: 2,
        succeeded: 2,
        message: "job is running, progress 100.0%"
      })
      yield* api.create(resources.node, readyNode("n3"))
      yield* advance(35_000)
      expect(status(yield* get(resources.imagePullJob, "forever", "default"))).toMatchObject({ desired: 3, succeeded: 3 })
      expect(pulls.get("n3/nginx:latest")).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a Never job re-pulls about daily", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("daily", { image: "nginx", completionPolicy: { type: "Never" } }))
      yield* advance(3000)
      expect(pulls.get("n1/nginx:latest")).toBe(1)
      yield* advance(24 * 3600_000 + 11 * 60_000, 60_000)
      expect(pulls.get("n1/nginx:latest")).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("two jobs pulling the same image one after the other", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("first", { image: "nginx:1.9.1", parallelism: 2 }))
      yield* advance(3000)
      yield* api.create(resources.imagePullJob, job("second", { image: "nginx:1.9.1", parallelism: 2 }))
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "first", "default"))).toMatchObject({ succeeded: 2, message: "job has completed" })
      expect(status(yield* get(resources.imagePullJob, "second", "default"))).toMatchObject({ succeeded: 2, message: "job has completed" })
      // Owners are named by the version kubectl resolves ImagePullJob to, whichever version the job came in.
      const owners = tagsOf(yield* get(resources.nodeImage, "n1"), "nginx")[0]?.ownerReferences
      expect(owners?.map((o) => [o.apiVersion, o.name])).toEqual([
        ["apps.kruise.io/v1beta1", "first"],
        ["apps.kruise.io/v1beta1", "second"]
      ])
      // The second job's owner bumped the version: each node pulled for each job.
      expect([...pulls.values()]).toEqual([2, 2])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a list job with one failing node", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], {
        pullMs: 1000,
        failure: (node, image) => (node === "n2" && image === "busybox" ? "manifest unknown" : undefined)
      })
      const api = yield* KubeApi
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "list", namespace: "default" },
        spec: { images: ["nginx:1.9.1", "busybox:1.29.2"], parallelism: 2 }
      })
      yield* advance(5000)
      const list = yield* get(resources.imageListPullJob, "list", "default")
      expect(status(list)).toMatchObject({
        desired: 2,
        completed: 2,
        succeeded: 1,
        failedImageStatuses: [{ name: "busybox:1.29.2", message: "failed on 1 nodes: n2" }]
      })
      expect(status(list)?.["completionTime"]).toBeDefined()
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("an invalid job gets Valid=False and a Warning event, and is not acted on until fixed", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      // Past admission, as on a cluster whose CRDs lack the rule (upstream's, before its webhook).
      yield* (yield* unadmitted).create(
        resources.imagePullJob,
        job("bad", { image: "nginx", selector: { names: ["n1"] }, podSelector: {} })
      )
      yield* advance(1000)
      const reported = yield* get(resources.imagePullJob, "bad", "default")
      expect((status(reported)!["conditions"] as Array<unknown>)[0]).toMatchObject({
        type: "Valid",
        status: "False",
        reason: "Invalid",
        message: "spec: can not set both selector and podSelector"
      })
      const events = yield* api.list(resources.event, { namespace: "default" })
      expect(events.items.map((e) => [e["reason"], e["type"]])).toContainEqual(["Invalid", "Warning"])
      expect(tagsOf(yield* get(resources.nodeImage, "n1"), "nginx")).toEqual([])
      yield* api.update(resources.imagePullJob, { ...reported, spec: { image: "nginx", selector: { names: ["n1"] } } })
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "bad", "default"))).toMatchObject({ succeeded: 1 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a missing pull secret is reported on the job the same way", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("nosecret", { image: "nginx", pullSecrets: ["missing"] }))
      yield* advance(1000)
      const reported = yield* get(resources.imagePullJob, "nosecret", "default")
      expect(status(reported)).toMatchObject({ message: "pull secret default/missing not found" })
      yield* api.create(resources.secret, secret("missing", { ".dockerconfigjson": dockerConfig("u") }))
      // Read again at the next resync of the secrets jobs reference.
      yield* advance(defaultSettings.secretResyncMs + 3000)
      expect(status(yield* get(resources.imagePullJob, "nosecret", "default"))).toMatchObject({ succeeded: 1 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("an unresponsive daemon's tags are failed after the grace, and the job completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000, silent: (node) => node === "n2" })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("silent", { image: "nginx", parallelism: 2 }))
      yield* advance(11 * 60_000, 10_000)
      expect(status(yield* get(resources.imagePullJob, "silent", "default"))).toMatchObject({
        succeeded: 1,
        failed: 1,
        failedNodes: ["n2"],
        message: "job has completed"
      })
      const events = yield* api.list(resources.event, { namespace: "default" })
      expect(events.items.map((e) => e["message"])).toContain('image "nginx:latest" on node n2: node has not responded for a long time')
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  // The store keeps only what the controller reads of a status (nodeImage/asRead.ts); the failure
  // is written on the server's copy, so what the daemon reported of the image's other tags stays.
  it.effect("an unresponsive daemon's failed tag leaves the image's other tags as the daemon reported them", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000, silent: (node) => node === "n2" })
      const api = yield* KubeApi
      const before = {
        tag: "1.25",
        phase: "Succeeded",
        startTime: "2026-12-01T10:00:00Z",
        completionTime: "2026-12-01T10:00:03Z",
        imageID: "sha256:0123",
        message: 'pulled image "nginx:1.25" on node n2 in 3s'
      }
      yield* api.patch(resources.nodeImage, { name: "n2" }, { status: { imageStatuses: { nginx: { tags: [before] } } } }, "status")
      yield* api.create(resources.imagePullJob, job("silent", { image: "nginx", parallelism: 2 }))
      yield* advance(11 * 60_000, 10_000)
      expect(status(yield* get(resources.imagePullJob, "silent", "default"))).toMatchObject({ failed: 1, failedNodes: ["n2"] })
      const n2 = yield* get(resources.nodeImage, "n2")
      const tags = (status(n2)!["imageStatuses"] as Record<string, { tags: Array<{ tag: string; phase: string }> }>)["nginx"]!.tags
      expect(tags.find((t) => t.tag === "1.25")).toEqual(before)
      expect(tags.find((t) => t.tag === "latest")).toMatchObject({ phase: "Failed" })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("parallelism is never exceeded while statuses race", () =>
    Effect.gen(function* () {
      yield* startCluster(
        Array.from({ length: 10 }, (_, i) => readyNode(`n${i}`)),
        { pullMs: 3000 }
      )
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("bounded", { image: "nginx", parallelism: 3 }))
      let maxActive = 0
      for (let i = 0; i < 15; i++) {
        yield* advance(1000)
        const nodes = (yield* api.list(resources.nodeImage)).items
        const pulling = nodes.filter((n) => {
          const tags = tagsOf(n, "nginx")
          const statuses =
            (n["status"] as { imageStatuses?: Record<string, { tags: Array<{ phase: string }> }> } | undefined)?.imageStatuses?.["nginx"]
              ?.tags ?? []
          return tags.length > 0 && !statuses.some((s) => s.phase === "Succeeded")
        }).length
        maxActive = Math.max(maxActive, pulling)
      }
      expect(maxActive).toBe(3)
      expect(status(yield* get(resources.imagePullJob, "bounded", "default"))).toMatchObject({ succeeded: 10 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})

describe("following Nodes and edits", () => {
  it.effect("NodeImage labels follow the Node, and the NodeImage goes with it", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1", { zone: "a" })], { pullMs: 1000 })
      const api = yield* KubeApi
      const node = yield* get(resources.node, "n1")
      yield* api.update(resources.node, { ...node, metadata: { ...node.metadata, labels: { zone: "b", tier: "gpu" } } })
      yield* advance(1000)
      expect((yield* get(resources.nodeImage, "n1")).metadata.labels).toEqual({ zone: "b", tier: "gpu" })
      yield* api.delete(resources.node, { name: "n1" })
      yield* advance(1000)
      expect((yield* Effect.flip(get(resources.nodeImage, "n1")))._tag).toBe("NotFound")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("raising parallelism of a running job takes effect at once", () =>
    Effect.gen(function* () {
      yield* startCluster(
        Array.from({ length: 6 }, (_, i) => readyNode(`n${i}`)),
        { pullMs: 10_000 }
      )
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("edited", { image: "nginx", parallelism: 1 }))
      yield* advance(2000)
      expect(status(yield* get(resources.imagePullJob, "edited", "default"))).toMatchObject({ active: 1 })
      const current = yield* get(resources.imagePullJob, "edited", "default")
      yield* api.update(resources.imagePullJob, { ...current, spec: { ...(current["spec"] as object), parallelism: 3 } })
      yield* advance(2000)
      expect(status(yield* get(resources.imagePullJob, "edited", "default"))).toMatchObject({ active: 3 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("changing a job's image releases the old tag and pulls the new one", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("retag", { image: "nginx:1", completionPolicy: { type: "Never" } }))
      yield* advance(3000)
      const current = yield* get(resources.imagePullJob, "retag", "default")
      yield* api.update(resources.imagePullJob, { ...current, spec: { ...(current["spec"] as object), image: "nginx:2" } })
      yield* advance(3000)
      expect(tagsOf(yield* get(resources.nodeImage, "n1"), "nginx").map((t) => t.tag)).toEqual(["2"])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a list job's template edit replaces its children", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "list", namespace: "default" },
        spec: { images: ["a", "b"], completionPolicy: { type: "Never" } }
      })
      yield* advance(2000)
      const before = (yield* api.list(resources.imagePullJob, { namespace: "default" })).items.map((j) => j.metadata.name)
      expect(before).toHaveLength(2)
      const list = yield* get(resources.imageListPullJob, "list", "default")
      yield* api.update(resources.imageListPullJob, { ...list, spec: { ...(list["spec"] as object), pullPolicy: { timeoutSeconds: 100 } } })
      yield* advance(2000)
      const after = (yield* api.list(resources.imagePullJob, { namespace: "default" })).items
      expect(after).toHaveLength(2)
      expect(after.map((j) => j.metadata.name).some((n) => before.includes(n))).toBe(false)
      expect(after.every((j) => (j["spec"] as { pullPolicy: { timeoutSeconds: number } }).pullPolicy.timeoutSeconds === 100)).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
