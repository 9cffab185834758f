// Scheduled pre-warm (issue 15) through the whole controller on the in-memory API server, with
// simulated daemons pulling, on simulated time: the cron job's runs become ImageListPullJobs that
// complete on the nodes; history limits, Forbid and garbage collection as upstream.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, inVersion, readyNode, startCluster } from "../support/controllerHarness.ts"

const cronJob = (
  name: string,
  spec: Record<string, unknown>,
  template: Record<string, unknown> = {
    imageListPullJobTemplate: { metadata: { labels: { app: "prefetch" } }, spec: { images: ["nginx:1.25", "redis:7.0"], parallelism: 2 } }
  }
): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "AdvancedCronJob",
  metadata: { name, namespace: "default" },
  spec: { template, ...spec }
})

const v1alpha1CronJobs = inVersion(resources.advancedCronJob, "v1alpha1")

const status = (o: KubeObject) => (o["status"] ?? {}) as Record<string, unknown>

const listJobNames = Effect.gen(function* () {
  const api = yield* KubeApi
  return (yield* api.list(resources.imageListPullJob, { namespace: "default" })).items.map((j) => j.metadata.name).sort()
})

const eventReasons = (name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const events = (yield* api.list(resources.event, { namespace: "default" })).items
    return events.filter((e) => (e["involvedObject"] as { name: string }).name === name).map((e) => e["reason"])
  })

describe("AdvancedCronJob on the in-memory cluster, simulated time", () => {
  it.effect("each minute an owned ImageListPullJob that completes on the nodes; history limit 3; GC with the cron job", () =>
    Effect.gen(function* () {
      // startCluster leaves the clock at 31 s: runs fall at 60 s, 120 s, ...
      const { pulls } = yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      const api = yield* KubeApi
      yield* api.create(v1alpha1CronJobs, cronJob("warm", { schedule: "*/1 * * * *" }))
      yield* advance(20_000)
      const before = yield* get(resources.advancedCronJob, "warm", "default")
      expect(status(before)).toMatchObject({ type: "ImageListPullJob" })
      expect(status(before)["lastScheduleTime"]).toBeUndefined()
      expect(yield* listJobNames).toEqual([])

      yield* advance(10_000)
      expect(yield* listJobNames).toEqual(["warm-60"])
      const run = yield* get(resources.imageListPullJob, "warm-60", "default")
      expect(run.metadata).toMatchObject({
        labels: { app: "prefetch" },
        annotations: { "apps.kruise.io/scheduled-at": "1970-01-01T00:01:00Z" },
        ownerReferences: [{ kind: "AdvancedCronJob", name: "warm", controller: true, uid: before.metadata.uid }]
      })
      const running = status(yield* get(resources.advancedCronJob, "warm", "default"))
      expect(running).toMatchObject({
        lastScheduleTime: "1970-01-01T00:01:00Z",
        active: [{ kind: "ImageListPullJob", name: "warm-60", uid: run.metadata.uid }]
      })

      // Both images pulled on both nodes: the list job completes, the cron job no longer lists it as active.
      yield* advance(15_000)
      expect(status(yield* get(resources.imageListPullJob, "warm-60", "default"))).toMatchObject({ desired: 2, succeeded: 2, completed: 2 })
      expect(status(yield* get(resources.advancedCronJob, "warm", "default"))["active"]).toBeUndefined()
      expect([...pulls.values()]).toEqual([1, 1, 1, 1])

      // Four more runs, each done within seconds: the three newest successful ones stay (upstream's default limit).
      yield* advance(4 * 60_000)
      expect(yield* listJobNames).toEqual(["warm-180", "warm-240", "warm-300"])
      expect(yield* eventReasons("warm")).toEqual(expect.arrayContaining(["SuccessfulCreate", "SuccessfulDelete"]))

      yield* api.delete(resources.advancedCronJob, { name: "warm", namespace: "default" })
      yield* advance(2000)
      expect(yield* listJobNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("Forbid: no new run while one is still pulling; the missed run starts when it finished", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 100_000 })
      const api = yield* KubeApi
      yield* api.create(v1alpha1CronJobs, cronJob("slow", { schedule: "*/1 * * * *", concurrencyPolicy: "Forbid" }))
      yield* advance(35_000)
      expect(yield* listJobNames).toEqual(["slow-60"])
      // At 120 s the first run is still pulling its first image.
      yield* advance(60_000)
      expect(yield* listJobNames).toEqual(["slow-60"])
      // Both images pulled at about 160 s: the run due at 120 s, missed meanwhile, starts then (no deadline).
      yield* advance(60_000)
      expect(yield* listJobNames).toEqual(["slow-120", "slow-60"])
      expect(status(yield* get(resources.advancedCronJob, "slow", "default"))).toMatchObject({
        lastScheduleTime: "1970-01-01T00:02:00Z",
        active: [{ name: "slow-120" }]
      })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a jobTemplate cron job is reported as not supported and never run", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(
        v1alpha1CronJobs,
        cronJob(
          "batch",
          { schedule: "*/1 * * * *" },
          {
            jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }], restartPolicy: "Never" } } } }
          }
        )
      )
      yield* advance(120_000)
      const cron = yield* get(resources.advancedCronJob, "batch", "default")
      expect(status(cron)).toMatchObject({ type: "Job" })
      expect(status(cron)["conditions"] as Array<unknown>).toContainEqual(
        expect.objectContaining({
          type: "Supported",
          status: "False",
          reason: "TemplateNotSupported"
        })
      )
      expect(yield* eventReasons("batch")).toEqual(["TemplateNotSupported"])
      expect(yield* listJobNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("what only the decoder refuses (an unknown time zone) is reported Valid=False with a warning, never run", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(v1alpha1CronJobs, cronJob("mars", { schedule: "*/1 * * * *", timeZone: "Mars/Olympus" }))
      yield* advance(90_000)
      const cron = yield* get(resources.advancedCronJob, "mars", "default")
      expect(status(cron)["conditions"] as Array<unknown>).toEqual([
        expect.objectContaining({
          type: "Valid",
          status: "False",
          reason: "Invalid",
          message: 'spec.timeZone: unknown time zone "Mars/Olympus"'
        })
      ])
      expect(yield* eventReasons("mars")).toEqual(["Invalid"])
      expect(yield* listJobNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
