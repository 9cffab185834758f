// runStatus as preheat rollout uses it: only the jobs of one label, and done once a frame's model says so.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { runStatus } from "../../src/statusView/runStatus.ts"
import type { Screen } from "../../src/statusView/screen.ts"
import { at, pullJob, t0 } from "./fixtures.ts"

describe("runStatus with a label selector and a stop condition", () => {
  it.effect("shows only the labelled jobs and returns the model of the first frame the condition accepts", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(t0)
      const api = yield* KubeApi
      const labelled = (name: string) => {
        const job = pullJob(name, {})
        return { ...job, metadata: { ...job.metadata, labels: { run: "r1" } } }
      }
      yield* api.create(resources.imagePullJob, labelled("mine")).pipe(Effect.orDie)
      yield* api.create(resources.imagePullJob, pullJob("other", {})).pipe(Effect.orDie)
      const frames: Array<ReadonlyArray<string>> = []
      const screen: Screen = { mode: "plain", width: () => 200, draw: (lines) => frames.push(lines) }
      const fiber = yield* runStatus({
        namespace: "default",
        watch: true,
        screen,
        labelSelector: "run=r1",
        until: (model) => model.jobs.every((j) => j.phase === "completed")
      }).pipe(Effect.scoped, Effect.forkChild)
      yield* TestClock.adjust(1_000)
      expect(frames.at(-1)?.[0]).toContain("1 job")
      expect(frames.flat().join("\n")).not.toContain("other")

      const current = yield* api.get(resources.imagePullJob, { namespace: "default", name: "mine" }).pipe(Effect.orDie)
      yield* api
        .update(
          resources.imagePullJob,
          {
            ...current,
            status: { desired: 1, succeeded: 1, active: 0, failed: 0, startTime: at(0), completionTime: at(1) }
          },
          "status"
        )
        .pipe(Effect.orDie)
      yield* TestClock.adjust(1_000)
      const model = yield* Fiber.join(fiber)
      expect(model.jobs.map((j) => [j.name, j.phase])).toEqual([["mine", "completed"]])
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )
})
