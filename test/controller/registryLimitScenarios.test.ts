/**
 * `--max-concurrent-pulls-per-registry` (issue 15, part 4) on the in-memory cluster with simulated
 * daemons, on simulated time: the limit holds across ImagePullJobs and list jobs' children, one
 * registry's queue never holds up another's, the held-back nodes show in the job's message and in
 * `preheat status`, and room is handed on when pulls finish or a job is deleted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { registryOf } from "../../src/controller/imagePullJob/registryRoom.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { buildModel, statusNodeImage } from "../../src/statusView/buildModel.ts"
import { render } from "../../src/statusView/render.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

const job = (name: string, image: string, parallelism: number): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, parallelism }
})

const status = (o: KubeObject) => (o["status"] ?? {}) as { active?: number; succeeded?: number; message?: string; completionTime?: string }

interface TagSpec {
  readonly tag: string
  readonly version: number
  readonly ownerReferences?: ReadonlyArray<unknown>
}
interface TagStatus {
  readonly tag: string
  readonly version?: number
  readonly phase: string
}

/**
 * Nodes pulling from each registry as the NodeImages say: a tag some job owns whose status for
 * its version is not final yet (handed and not reported counts, as the controller counts it).
 */
const inFlightByRegistry = Effect.gen(function* () {
  const api = yield* KubeApi
  const counts = new Map<string, number>()
  for (const node of (yield* api.list(resources.nodeImage)).items) {
    const images = (node["spec"] as { images?: Record<string, { tags: ReadonlyArray<TagSpec> }> }).images ?? {}
    const statuses =
      (node["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<TagStatus> }> } | undefined)?.imageStatuses ?? {}
    for (const [image, entry] of Object.entries(images)) {
      for (const tag of entry.tags) {
        if ((tag.ownerReferences ?? []).length === 0) continue
        const reported = statuses[image]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === tag.version)
        if (reported?.phase === "Succeeded" || reported?.phase === "Failed") continue
        const registry = registryOf(image)
        counts.set(registry, (counts.get(registry) ?? 0) + 1)
      }
    }
  }
  return counts
})

/** Moves simulated time on in small steps, keeping the largest count of nodes pulling per registry seen. */
const sampling = (peaks: Map<string, number>, millis: number, step = 100) =>
  Effect.gen(function* () {
    for (let elapsed = 0; elapsed < millis; elapsed += step) {
      yield* advance(step, step)
      for (const [registry, count] of yield* inFlightByRegistry) peaks.set(registry, Math.max(peaks.get(registry) ?? 0, count))
    }
  })

const nodes = (n: number) => Array.from({ length: n }, (_, i) => readyNode(`n${String(i).padStart(2, "0")}`))

describe("the registry limit across jobs", () => {
  it.effect("never has more nodes pulling from a registry than the limit, over jobs and list jobs' children", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster(nodes(8), { pullMs: 2000 }, { maxConcurrentPullsPerRegistry: 3 })
      const api = yield* KubeApi
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "list", namespace: "default" },
        spec: { images: ["nginx:1", "busybox:1"], parallelism: 4 }
      })
      yield* api.create(resources.imagePullJob, job("redis", "redis:7", 4))
      yield* api.create(resources.imagePullJob, job("pause", "registry.k8s.io/pause:3.9", 4))
      const peaks = new Map<string, number>()
      yield* sampling(peaks, 30_000)
      // Three docker.io jobs of 8 nodes at most 3 at a time: 24 pulls of 2 s need 16 s at best.
      expect(peaks.get("docker.io")).toBe(3)
      expect(peaks.get("registry.k8s.io")).toBe(3)
      const all = (yield* api.list(resources.imagePullJob, { namespace: "default" })).items
      expect(all).toHaveLength(4)
      expect(all.map((j) => [status(j).succeeded, status(j).completionTime !== undefined])).toEqual(all.map(() => [8, true]))
      expect(status(yield* get(resources.imageListPullJob, "list", "default"))).toMatchObject({ completionTime: expect.any(String) })
      expect(pulls.size).toBe(32)
      expect([...pulls.values()].every((n) => n === 1)).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a full registry holds up no job of another registry", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(10), { pullMs: 2000 }, { maxConcurrentPullsPerRegistry: 2 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("hub", "nginx:1", 10))
      yield* api.create(resources.imagePullJob, job("quay", "quay.io/org/app:1", 2))
      yield* advance(1000)
      expect(status(yield* get(resources.imagePullJob, "hub", "default"))).toMatchObject({ active: 2 })
      expect(status(yield* get(resources.imagePullJob, "quay", "default"))).toMatchObject({ active: 2 })
      // quay.io's job runs as if alone: 10 nodes, 2 at a time, 2 s each.
      yield* advance(10_000)
      expect(status(yield* get(resources.imagePullJob, "quay", "default"))).toMatchObject({
        succeeded: 10,
        completionTime: expect.any(String)
      })
      expect(status(yield* get(resources.imagePullJob, "hub", "default")).completionTime).toBeDefined()
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("shows the held-back nodes in the job's message and in preheat status, and drops them when done", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(6), { pullMs: 3000 }, { maxConcurrentPullsPerRegistry: 2 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("first", "nginx:1", 2))
      yield* advance(500, 100)
      yield* api.create(resources.imagePullJob, job("second", "busybox:1", 4))
      yield* advance(1500)
      const second = yield* get(resources.imagePullJob, "second", "default")
      expect(status(second)).toMatchObject({
        active: 0,
        message: "job is running, progress 0.0%, 4 nodes waiting for registry docker.io (limit 2)"
      })
      const objects = {
        namespace: "default",
        imagePullJobs: (yield* api.list(resources.imagePullJob, { namespace: "default" })).items,
        imageListPullJobs: [],
        nodeImages: (yield* api.list(resources.nodeImage)).items.map(statusNodeImage)
      }
      const lines = render(buildModel(objects), Date.parse("1970-01-01T00:01:00Z"), 120, "plain")
      const at = lines.findIndex((l) => l.startsWith("ImagePullJob second"))
      expect(lines.slice(at, at + 3).join("\n")).toContain(
        "  job is running, progress 0.0%, 4 nodes waiting for registry docker.io (limit 2)"
      )
      yield* advance(30_000)
      expect(status(yield* get(resources.imagePullJob, "second", "default"))).toMatchObject({ succeeded: 6, message: "job has completed" })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("hands room on when pulls finish, oldest waiter first", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(4), { pullMs: 4000 }, { maxConcurrentPullsPerRegistry: 2 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("a", "nginx:1", 2))
      yield* advance(500, 100)
      yield* api.create(resources.imagePullJob, job("b", "busybox:1", 2))
      yield* advance(500, 100)
      yield* api.create(resources.imagePullJob, job("c", "redis:1", 2))
      yield* advance(1000)
      const active = (name: string) => Effect.map(get(resources.imagePullJob, name, "default"), (o) => status(o).active)
      expect([yield* active("b"), yield* active("c")]).toEqual([0, 0])
      // a's first two pulls end at about 4 s: both slots go to b, which waited longest; a and c wait.
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "b", "default"))).toMatchObject({ active: 2 })
      expect(status(yield* get(resources.imagePullJob, "a", "default"))).toMatchObject({ active: 0, succeeded: 2 })
      expect(status(yield* get(resources.imagePullJob, "c", "default"))).toMatchObject({ active: 0 })
      const peaks = new Map<string, number>()
      yield* sampling(peaks, 30_000, 250)
      expect(peaks.get("docker.io")).toBe(2)
      for (const name of ["a", "b", "c"]) {
        expect(status(yield* get(resources.imagePullJob, name, "default"))).toMatchObject({ succeeded: 4, message: "job has completed" })
      }
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a job deleted mid-pull leaves no room behind: the waiting job takes it at once", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(4), { pullMs: 20_000 }, { maxConcurrentPullsPerRegistry: 2 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("slow", "nginx:1", 2))
      yield* advance(500, 100)
      yield* api.create(resources.imagePullJob, job("waiting", "busybox:1", 2))
      yield* advance(2000)
      expect(status(yield* get(resources.imagePullJob, "waiting", "default"))).toMatchObject({ active: 0 })
      yield* api.delete(resources.imagePullJob, { name: "slow", namespace: "default" })
      yield* advance(1500, 100)
      // Long before slow's pulls would have ended (20 s), its room went to the waiting job.
      const waiting = status(yield* get(resources.imagePullJob, "waiting", "default"))
      expect(waiting.active).toBe(2)
      expect(waiting.message).toBe("job is running, progress 0.0%")
      yield* advance(45_000, 5000)
      expect(status(yield* get(resources.imagePullJob, "waiting", "default"))).toMatchObject({ succeeded: 4, message: "job has completed" })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a controller that starts leading counts the pulls its predecessor started", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      for (const node of nodes(4)) yield* api.create(resources.node, node)
      const settings = { ...defaultSettings, maxConcurrentPullsPerRegistry: 2 }
      yield* simulateDaemons({ pullMs: 20_000 })
      const first = yield* makeController(settings)
      const leading = yield* Effect.forkChild(first.reconcile())
      yield* advance(31_000)
      yield* api.create(resources.imagePullJob, job("slow", "nginx:1", 2))
      yield* advance(2000)
      expect(status(yield* get(resources.imagePullJob, "slow", "default"))).toMatchObject({ active: 2 })
      // The leader goes; a new one starts with empty books and must not see docker.io as idle.
      yield* Fiber.interrupt(leading)
      const second = yield* makeController(settings)
      yield* Effect.forkScoped(second.reconcile())
      yield* api.create(resources.imagePullJob, job("next", "busybox:1", 2))
      yield* advance(3000)
      expect(status(yield* get(resources.imagePullJob, "next", "default"))).toMatchObject({
        active: 0,
        message: "job is running, progress 0.0%, 2 nodes waiting for registry docker.io (limit 2)"
      })
      const peaks = new Map<string, number>()
      yield* sampling(peaks, 90_000, 1000)
      expect(peaks.get("docker.io")).toBe(2)
      for (const name of ["slow", "next"]) {
        expect(status(yield* get(resources.imagePullJob, name, "default"))).toMatchObject({ succeeded: 4, message: "job has completed" })
      }
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
