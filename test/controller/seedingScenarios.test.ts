/**
 * Seed-first fan-out (issue 39) on the in-memory cluster with simulated daemons, on simulated
 * time: the controller gives a job's tag to its seed nodes first and to the others only once the
 * seeds succeeded (every other pull starts after the seeds' pulls ended), a failed seed is
 * replaced, `--seed-nodes` seeds jobs without the annotation, and `preheat status` says which
 * phase a job is in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { buildModel, statusNodeImage } from "../../src/statusView/buildModel.ts"
import { render } from "../../src/statusView/render.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const image = "registry.example.com/team/app"

const job = (name: string, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", annotations },
  spec: { image: `${image}:v1`, parallelism: 10 }
})

interface TagStatus {
  readonly phase: string
  readonly startTime?: string
  readonly completionTime?: string
}

/** Each node's report on the job's tag. */
const reports = Effect.gen(function* () {
  const api = yield* KubeApi
  const byNode = new Map<string, TagStatus>()
  for (const node of (yield* api.list(resources.nodeImage)).items) {
    const statuses = (node["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<TagStatus> }> } | undefined)?.imageStatuses
    const tag = statuses?.[image]?.tags[0]
    if (tag !== undefined) byNode.set(node.metadata.name ?? "", tag)
  }
  return byNode
})

const status = (o: KubeObject) =>
  (o["status"] ?? {}) as {
    succeeded?: number
    failed?: number
    message?: string
    completionTime?: string
    conditions?: ReadonlyArray<{ type: string; status: string; reason: string }>
  }

const nodes = (n: number) => Array.from({ length: n }, (_, i) => readyNode(`n${i}`))

const statusView = Effect.gen(function* () {
  const api = yield* KubeApi
  const model = buildModel({
    namespace: "default",
    imagePullJobs: (yield* api.list(resources.imagePullJob, { namespace: "default" })).items,
    imageListPullJobs: [],
    nodeImages: (yield* api.list(resources.nodeImage)).items.map(statusNodeImage)
  })
  return render(model, 0, 200, "plain").join("\n")
})

describe("seed-first fan-out on the simulated cluster", () => {
  it.effect("pulls on the seed first and on every other node only after the seed's pull ended", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(5), { pullMs: 4000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("seeded", { "preheat.kruise.io/seed-nodes": "1" }))
      yield* advance(2000, 100)
      expect((yield* reports).size).toBe(1)
      const seeding = status(yield* get(resources.imagePullJob, "seeded", "default"))
      expect(seeding.message).toBe("job is seeding, 0 of 1 seed nodes pulled, progress 0.0%")
      expect(yield* statusView).toContain("running  seeding")

      yield* advance(20_000, 250)
      const done = status(yield* get(resources.imagePullJob, "seeded", "default"))
      expect([done.succeeded, done.completionTime !== undefined]).toEqual([5, true])
      expect(done.conditions?.find((c) => c.type === "Seeded")).toMatchObject({ status: "True", reason: "SeedsPulled" })
      const tags = [...(yield* reports).values()]
      const seedEnd = Math.min(...tags.map((t) => Date.parse(t.completionTime ?? "")))
      const starts = tags.map((t) => Date.parse(t.startTime ?? "")).sort((a, b) => a - b)
      // One pull started first; the four others started once it had ended.
      expect(starts.slice(1).every((s) => s >= seedEnd)).toBe(true)
      expect(starts[0]!).toBeLessThan(seedEnd)
      const events = (yield* api.list(resources.event, { namespace: "default" })).items
      expect(events.map((e) => e["reason"])).toContain("Seeded")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("without seeding, every node starts at once (the same cluster and job)", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(5), { pullMs: 4000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("plain"))
      yield* advance(2000, 100)
      expect((yield* reports).size).toBe(5)
      expect(yield* statusView).not.toContain("seeding")
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("replaces a failed seed by the next node, and fans out from the one that succeeded", () =>
    Effect.gen(function* () {
      // The first seed the job picks fails (every attempt); whichever node that is.
      let first: string | undefined
      const failure = (node: string) => {
        first ??= node
        return node === first ? "simulated: connection reset by peer" : undefined
      }
      yield* startCluster(nodes(4), { pullMs: 3000, failure })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("flaky", { "preheat.kruise.io/seed-nodes": "1" }))
      yield* advance(4000, 100)
      // The first seed failed; one more node pulls in its place, nobody else.
      const afterFailure = yield* reports
      expect([...afterFailure.values()].map((t) => t.phase).sort()).toEqual(["Failed", "Pulling"])
      yield* advance(20_000, 250)
      const done = status(yield* get(resources.imagePullJob, "flaky", "default"))
      expect([done.succeeded, done.failed]).toEqual([3, 1])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("seeds every job without the annotation under --seed-nodes; the annotation 0 turns it off for one job", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(4), { pullMs: 4000 }, { seedNodes: "50%" })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("defaulted"))
      yield* advance(2000, 100)
      expect((yield* reports).size).toBe(2)
      const off = { ...job("off", { "preheat.kruise.io/seed-nodes": "0" }), spec: { image: `${image}-other:v1`, parallelism: 10 } }
      yield* api.create(resources.imagePullJob, off)
      yield* advance(2000, 100)
      const pulling = (yield* api.list(resources.nodeImage)).items.filter((n) =>
        Object.keys((n["spec"] as { images?: Record<string, unknown> }).images ?? {}).includes(`${image}-other`)
      )
      expect(pulling).toHaveLength(4)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("reports a bad annotation value with a Warning and pulls without seeding", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes(3), { pullMs: 4000 })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("typo", { "preheat.kruise.io/seed-nodes": "one" }))
      yield* advance(2000, 100)
      expect((yield* reports).size).toBe(3)
      const typo = status(yield* get(resources.imagePullJob, "typo", "default"))
      expect(typo.conditions?.find((c) => c.type === "Seeded")).toMatchObject({ status: "False", reason: "InvalidSeedNodes" })
      const warnings = (yield* api.list(resources.event, { namespace: "default" })).items.filter((e) => e["reason"] === "InvalidSeedNodes")
      expect(warnings).toHaveLength(1)
      expect(yield* statusView).toContain('annotation preheat.kruise.io/seed-nodes: "one" is not a count')
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
