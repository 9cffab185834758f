import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { runStatus } from "../../src/statusView/runStatus.ts"
import type { Screen } from "../../src/statusView/screen.ts"
import { at, nodeImage, pullJob, t0 } from "./fixtures.ts"

/** A plain screen that keeps its frames. */
const recordingScreen = () => {
  const frames: Array<ReadonlyArray<string>> = []
  const screen: Screen = { mode: "plain", width: () => 200, draw: (lines) => frames.push(lines) }
  return { frames, screen }
}

/** Creates an object, then writes its status through the status subresource, as the roles do. */
const seed = (resource: (typeof resources)[keyof typeof resources], object: KubeObject) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const { status, ...rest } = object
    const created = yield* api.create(resource, rest)
    return status === undefined ? created : yield* api.update(resource, { ...created, status }, "status")
  }).pipe(Effect.orDie)

const seedCluster = Effect.gen(function* () {
  const job = yield* seed(
    resources.imagePullJob,
    pullJob("warm", {
      status: { startTime: at(-40), desired: 3, active: 1, succeeded: 2, failed: 0, message: "job is running, progress 66.7%" }
    })
  )
  const uid = job.metadata.uid ?? ""
  yield* seed(
    resources.nodeImage,
    nodeImage("node-3", {
      image: "nginx",
      tag: "1.9.1",
      ownerUid: uid,
      status: { phase: "Pulling", progress: 70, startTime: at(-12) }
    })
  )
  return job
})

const golden = [
  "namespace default  1 job  2026-12-01T10:00:00Z",
  "",
  "ImagePullJob warm  nginx:1.9.1  running",
  "  [#############-------]  66%  desired 3  active 1  succeeded 2  failed 0  elapsed 40s  eta 20s",
  "  job is running, progress 66.7%",
  "    node-3  Pulling   70%  12s"
]

describe("runStatus", () => {
  it.effect("without --watch draws one frame, at the Clock's time, once the lists are in", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(t0)
      yield* seedCluster
      const { frames, screen } = recordingScreen()
      yield* runStatus({ namespace: "default", watch: false, screen }).pipe(Effect.scoped)
      expect(frames).toEqual([golden])
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("fails for a job that is not there", () =>
    Effect.gen(function* () {
      const { screen } = recordingScreen()
      const error = yield* runStatus({ namespace: "default", job: "nope", watch: false, screen }).pipe(Effect.scoped, Effect.flip)
      expect(error.message).toBe("no ImagePullJob or ImageListPullJob named nope in namespace default")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("with --watch in plain mode draws again on a change, not as the clock passes", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(t0)
      yield* seedCluster
      const { frames, screen } = recordingScreen()
      const fiber = yield* runStatus({ namespace: "default", job: "warm", watch: true, screen }).pipe(Effect.scoped, Effect.forkChild)
      yield* TestClock.adjust(1_000)
      const first = frames.length
      expect(frames.at(-1)?.[3]).toContain("succeeded 2")
      yield* TestClock.adjust(10_000)
      expect(frames.length).toBe(first)

      const api = yield* KubeApi
      const current = yield* api.get(resources.imagePullJob, { namespace: "default", name: "warm" }).pipe(Effect.orDie)
      yield* api
        .update(
          resources.imagePullJob,
          {
            ...current,
            status: { ...(current["status"] as object), active: 0, succeeded: 3, completionTime: at(15), message: "job has completed" }
          },
          "status"
        )
        .pipe(Effect.orDie)
      yield* TestClock.adjust(1_000)
      expect(frames.length).toBeGreaterThan(first)
      expect(frames.at(-1)?.slice(2, 5)).toEqual([
        "ImagePullJob warm  nginx:1.9.1  completed",
        "  [####################] 100%  desired 3  active 0  succeeded 3  failed 0  elapsed 55s  eta done",
        "  job has completed"
      ])
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
