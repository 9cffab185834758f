/**
 * The task writer (imagePullJob/taskWriter.ts) on simulated time, against the in-memory API server
 * with task writes that take 50 ms: what it merges, when it writes, and what each job hears.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import type { ImageSpec } from "../../src/api/nodeImage.ts"
import { makeTaskWriter } from "../../src/controller/imagePullJob/taskWriter.ts"
import type { TaskWriteOutcome } from "../../src/controller/imagePullJob/taskWriter.ts"
import { Conflict, Invalid, Unavailable } from "../../src/kube/errors.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { WriteError } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"

interface Sent {
  readonly at: number
  readonly node: string
  readonly images: ReadonlyArray<string>
}

/** What the fake API server does to the next task write: as asked, or fail. */
type Fault = "conflict" | "unavailable" | undefined

const log = { sent: [] as Array<Sent>, gets: 0, fault: undefined as Fault }

/** Image names a JSON patch of the spec adds or removes. */
const imagesIn = (patch: unknown): ReadonlyArray<string> =>
  (patch as ReadonlyArray<{ readonly path: string; readonly value?: Record<string, unknown> }>).flatMap((op) =>
    op.path === "/spec/images"
      ? Object.keys(op.value ?? {})
      : op.path.startsWith("/spec/images/")
        ? [op.path.slice(13).replaceAll("~1", "/")]
        : []
  )

/**
 * The in-memory API server whose task writes (JSON patches of a NodeImage) take 50 ms; a write adding the image "bad" is refused
 * as the schema's rules would, and `log.fault` fails the next one.
 */
const slowServer = Layer.effect(
  KubeApi,
  Effect.gen(function* () {
    const api = yield* KubeApi
    return KubeApi.of({
      ...api,
      get: (resource, key) =>
        Effect.andThen(
          Effect.sync(() => log.gets++),
          api.get(resource, key)
        ),
      patch: (resource, key, patch, subresource) =>
        Effect.gen(function* () {
          const taskWrite = resource === resources.nodeImage && subresource === undefined && Array.isArray(patch)
          if (!taskWrite) return yield* api.patch(resource, key, patch, subresource)
          const images = imagesIn(patch)
          log.sent.push({ at: yield* TestClock.testClockWith((clock) => clock.currentTimeMillis), node: key.name, images })
          yield* Effect.sleep(50)
          const fault = log.fault
          log.fault = undefined
          if (fault === "conflict") return yield* new Conflict({ kind: "NodeImage", objectName: key.name, message: "modified" })
          if (fault === "unavailable") return yield* new Unavailable({ message: "connection reset" })
          if (images.includes("bad")) {
            return yield* new Invalid({ kind: "NodeImage", objectName: key.name, causes: [{ field: "spec.images[bad]", message: "no" }] })
          }
          return yield* api.patch(resource, key, patch, subresource)
        })
    })
  })
).pipe(Layer.provide(InMemoryKubeApi.layer))

const entry: ImageSpec = { tags: [{ tag: "v1", version: 0 }] } as unknown as ImageSpec

/** NodeImages n1 and n2 on the server and in the store, and a writer with a 20 ms window. */
const setup = Effect.gen(function* () {
  log.sent = []
  log.gets = 0
  log.fault = undefined
  const api = yield* KubeApi
  const store = makeStore(resources.nodeImage, { specFollowsGeneration: true })
  for (const name of ["n1", "n2"]) {
    const created = yield* api.create(resources.nodeImage, {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "NodeImage",
      metadata: { name },
      spec: {}
    })
    yield* store.written(created)
  }
  const writer = yield* makeTaskWriter(store, "20 millis")
  /** One job's changes (an image each) to `node`, handed in now; its answer when it comes. */
  const hand = (node: string, ...images: ReadonlyArray<string>) =>
    Effect.forkChild(
      Effect.map(
        writer.write(new Map([[node, { decidedOn: store.get(node), changes: new Map(images.map((image) => [image, entry])) }]])),
        (answers) => answers.get(node)!
      ),
      { startImmediately: true }
    )
  const specOf = (node: string) => Object.keys((store.get(node)?.["spec"] as { images?: object } | undefined)?.images ?? {}).sort()
  return { api, store, hand, specOf }
})

const at = (millis: number) => TestClock.adjust(millis)
const answerOf = (fiber: Fiber.Fiber<Exit.Exit<TaskWriteOutcome, WriteError>>) => Fiber.join(fiber)
const written = Exit.succeed({ _tag: "Written" })

describe("the task writer", () => {
  it.effect(
    "sends what jobs hand a NodeImage within its window as one write; what comes meanwhile goes in the next, once it is answered",
    () =>
      Effect.gen(function* () {
        const { hand, specOf } = yield* setup
        const a = yield* hand("n1", "a")
        yield* at(10)
        const b = yield* hand("n1", "b")
        yield* at(20)
        // In flight from 20 ms to 70 ms: c and d wait for it; n2's own write goes out beside it.
        const c = yield* hand("n1", "c")
        const e = yield* hand("n2", "e")
        yield* at(10)
        const d = yield* hand("n1", "d")
        yield* at(100)
        expect(log.sent).toEqual([
          { at: 20, node: "n1", images: ["a", "b"] },
          { at: 50, node: "n2", images: ["e"] },
          { at: 70, node: "n1", images: ["c", "d"] }
        ])
        for (const fiber of [a, b, c, d, e]) expect(yield* answerOf(fiber)).toEqual(written)
        expect(specOf("n1")).toEqual(["a", "b", "c", "d"])
      }).pipe(Effect.scoped, Effect.provide(slowServer))
  )

  it.effect("a part that would replace what an earlier part of the same write changed is answered: decide again", () =>
    Effect.gen(function* () {
      const { hand } = yield* setup
      const first = yield* hand("n1", "a")
      const second = yield* hand("n1", "a", "b")
      yield* at(100)
      expect(log.sent).toEqual([{ at: 20, node: "n1", images: ["a"] }])
      expect(yield* answerOf(first)).toEqual(written)
      expect(yield* answerOf(second)).toEqual(Exit.succeed({ _tag: "DecideAgain", after: expect.anything() }))
    }).pipe(Effect.scoped, Effect.provide(slowServer))
  )

  it.effect(
    "a shared write the API server refuses is sent again part by part: only the job whose change breaks the rules hears of it",
    () =>
      Effect.gen(function* () {
        const { hand, specOf } = yield* setup
        const good = yield* hand("n1", "ok")
        const bad = yield* hand("n1", "bad")
        yield* at(200)
        expect(log.sent.map((s) => s.images)).toEqual([["ok", "bad"], ["ok"], ["bad"]])
        expect(yield* answerOf(good)).toEqual(written)
        const refused = yield* answerOf(bad)
        expect(Exit.isSuccess(refused) && refused.value._tag === "Refused" && refused.value.error.causes).toEqual([
          { field: "spec.images[bad]", message: "no" }
        ])
        expect(specOf("n1")).toEqual(["ok"])
      }).pipe(Effect.scoped, Effect.provide(slowServer))
  )

  it.effect("after a conflict the NodeImage is read once, and the jobs decide again on what it holds now", () =>
    Effect.gen(function* () {
      const { api, hand, store } = yield* setup
      // Another writer's change the store has not heard of (its watch is behind).
      yield* api.patch(resources.nodeImage, { name: "n1" }, { spec: { images: { other: entry } } })
      const job = yield* hand("n1", "a")
      yield* at(100)
      expect(log.gets).toBe(1)
      const answer = yield* answerOf(job)
      expect(Exit.isSuccess(answer) && answer.value._tag === "DecideAgain" && Duration.toMillis(answer.value.after)).toBe(0)
      expect(store.get("n1")?.metadata.generation).toBe(2)
      // A conflict the server's version does not explain: looked at again in a second, not at once.
      log.fault = "conflict"
      const again = yield* hand("n1", "a")
      yield* at(100)
      const later = yield* answerOf(again)
      expect(Exit.isSuccess(later) && later.value._tag === "DecideAgain" && Duration.toMillis(later.value.after)).toBe(1000)
      expect(log.gets).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(slowServer))
  )

  it.effect("a write that fails fails every job whose changes it carried", () =>
    Effect.gen(function* () {
      const { hand } = yield* setup
      log.fault = "unavailable"
      const a = yield* hand("n1", "a")
      const b = yield* hand("n1", "b")
      yield* at(100)
      for (const fiber of [a, b]) {
        const answer = yield* answerOf(fiber)
        expect(Exit.isFailure(answer) && answer.cause.reasons.map((r) => (r._tag === "Fail" ? r.error._tag : r._tag))).toEqual([
          "Unavailable"
        ])
      }
    }).pipe(Effect.scoped, Effect.provide(slowServer))
  )
})
