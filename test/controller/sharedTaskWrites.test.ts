/**
 * Jobs that arrive together share their writes (issue 40): the controller gives a NodeImage the
 * tasks of every job that wants it in one write (imagePullJob/taskWriter.ts, the jobs in the same
 * order: cohort.ts), the daemons report the outcomes of tags that end together in one status write
 * (daemon/statusCadence.ts, which the simulated daemons follow), so that a node costs about two
 * writes per wave of jobs rather than two per job.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { defaultDaemonOptions } from "../../src/daemon/options.ts"
import { statusCadence } from "../../src/daemon/statusCadence.ts"
import { isJsonPatch, KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, readyNode } from "../support/controllerHarness.ts"
import { ApiRequests, recordingHarnessLayer } from "../support/recordingKubeApi.ts"
import { simulateDaemons } from "../support/simulatedDaemons.ts"

/**
 * The in-memory API server, except that a task write to a NodeImage takes 50 ms to reach it (as
 * over HTTP), so writes sent side by side are in flight together; counts them and the ones refused.
 */
const slowTaskWrites = (counts: { sent: number; conflicts: number }) =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const api = yield* KubeApi
      return KubeApi.of({
        ...api,
        patch: (resource, key, patch, subresource) => {
          const taskWrite = resource === resources.nodeImage && subresource === undefined && (isJsonPatch(patch) || "spec" in patch)
          if (!taskWrite) return api.patch(resource, key, patch, subresource)
          counts.sent++
          return Effect.sleep(50).pipe(
            Effect.andThen(api.patch(resource, key, patch, subresource)),
            Effect.tapErrorTag("Conflict", () => Effect.sync(() => counts.conflicts++))
          )
        }
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer))

const counts = { sent: 0, conflicts: 0 }

const pullJob = (name: string, image: string, parallelism: number): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, parallelism }
})

const images = Array.from({ length: 10 }, (_, i) => `registry.example.com/app-${i}:v1`)
const nodeNames = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, "0")}`)

/** 20 nodes, the controller, and daemons writing their status as the shipped daemon does. */
const cluster = Effect.gen(function* () {
  const api = yield* KubeApi
  for (const node of nodeNames) yield* api.create(resources.node, readyNode(node))
  const controller = yield* makeController(defaultSettings)
  yield* Effect.forkScoped(controller.reconcile())
  yield* simulateDaemons({ pullMs: 1000, cadence: statusCadence(defaultDaemonOptions) })
  yield* advance(31_000)
})

/**
 * Lets every fiber that can run do so before time moves: the jobs' first reconciles all decide
 * within the task writer's window, as they do when the controller is not short of CPU.
 */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 200; i++) yield* Effect.yieldNow
})

/** The NodeImage writes since `from` (an index into the requests seen): the controller's tasks, the daemons' status. */
const nodeImageWrites = (from: number) =>
  Effect.map(ApiRequests, ({ seen }) => {
    const writes = seen.slice(from).filter((r) => r.verb === "patch" && r.resource.startsWith("nodeimages"))
    return {
      tasks: writes.filter((r) => r.resource === "nodeimages").length,
      status: writes.filter((r) => r.resource === "nodeimages/status").length
    }
  })

const completed = (job: KubeObject) => (job["status"] as { completionTime?: string; succeeded?: number } | undefined) ?? {}

describe("jobs created together", () => {
  it.effect("share one task write per NodeImage, none of which conflicts", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const nodes = ["n1", "n2", "n3"]
      for (const node of nodes) yield* api.create(resources.node, readyNode(node))
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* simulateDaemons({ pullMs: 1000 })
      yield* advance(31_000)
      const images = ["nginx:1.25", "redis:7", "busybox:1.36", "alpine:3.20"]
      for (const [i, image] of images.entries()) yield* api.create(resources.imagePullJob, pullJob(`job-${i}`, image, 3))
      yield* advance(30_000, 50)
      for (const i of images.keys()) {
        const status = (yield* get(resources.imagePullJob, `job-${i}`, "default"))["status"]
        expect(status).toMatchObject({ desired: 3, succeeded: 3, message: "job has completed" })
      }
      // One write per node for the four jobs' tasks (it was one per node and job, in turn).
      expect(counts).toEqual({ sent: nodes.length, conflicts: 0 })
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(slowTaskWrites(counts), SchedulerLive.layer())))
  )

  it.effect("in waves: each node gets the ten jobs' tasks in one write and reports their outcomes in one", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* cluster
      const from = (yield* ApiRequests).seen.length
      // Ten jobs of five nodes at a time over twenty nodes: four waves.
      for (const [i, image] of images.entries()) yield* api.create(resources.imagePullJob, pullJob(`job-${i}`, image, 5))
      yield* settle
      yield* advance(10_000, 20)
      for (const i of images.keys()) {
        expect(completed(yield* get(resources.imagePullJob, `job-${i}`, "default"))).toMatchObject({ succeeded: 20 })
      }
      // Two writes per node for its ten tasks (one per job each way before: 200 and 200).
      expect(yield* nodeImageWrites(from)).toEqual({ tasks: nodeNames.length, status: nodeNames.length })
      // Each job's progress is announced once per milestone, however often its reconciles saw it
      // before its counters were written.
      const progress = (yield* api.list(resources.event, { namespace: "default" })).items.filter((e) => e["reason"] === "Progress")
      expect(progress.map((e) => e["count"] ?? 1)).toEqual(Array.from({ length: 30 }, () => 1))
      const conflicts = (yield* ApiRequests).seen.slice(from).filter((r) => r.verb === "get" && r.resource === "nodeimages")
      expect(conflicts).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("as one ImageListPullJob's children: the same", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* cluster
      const from = (yield* ApiRequests).seen.length
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "list", namespace: "default" },
        spec: { images, parallelism: 5, completionPolicy: { type: "Always" } }
      })
      yield* settle
      yield* advance(10_000, 20)
      expect(completed(yield* get(resources.imageListPullJob, "list", "default"))).toMatchObject({ completionTime: expect.any(String) })
      expect(yield* nodeImageWrites(from)).toEqual({ tasks: nodeNames.length, status: nodeNames.length })
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})
