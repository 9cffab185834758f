import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, References, Stream } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { ApiAccess } from "../../src/kube/ApiAccess.ts"
import { Gone, Unavailable } from "../../src/kube/errors.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject, WatchEvent } from "../../src/kube/KubeApi.ts"
import { reflect } from "../../src/kube/reflector.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"
import { watcher } from "../../src/kube/watcher.ts"
import type { WatcherEvent } from "../../src/kube/watcher.ts"

const fresh = (object: KubeObject): KubeObject => JSON.parse(JSON.stringify(object))

/** The in-memory server as a live one looks to a client: every object fresh JSON. */
const asOverTheWire = Layer.effect(
  KubeApi,
  Effect.map(Effect.service(KubeApi), (api) =>
    KubeApi.of({
      ...api,
      list: (resource, options) => Effect.map(api.list(resource, options), (l) => ({ ...l, items: l.items.map(fresh) })),
      watch: (resource, options) =>
        Stream.map(api.watch(resource, options), (e) => (e.type === "BOOKMARK" ? e : { ...e, object: fresh(e.object) }))
    })
  )
).pipe(Layer.provideMerge(InMemoryKubeApi.layer))

const tag = {
  tag: "1.25",
  version: 0,
  createdAt: "2026-12-02T10:00:00Z",
  ownerReferences: [{ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "j", uid: "u1" }]
}
const nodeImage = (name: string, resourceVersion?: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
  spec: { images: { nginx: { tags: [tag] } } }
})
const imagesOf = (o: KubeObject | undefined) => (o!["spec"] as { images: Record<string, unknown> }).images

describe("reflector", () => {
  it.effect("holds objects from a live server with unchanged parts shared between versions", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.nodeImage, nodeImage("n1"))
      const store = makeStore(resources.nodeImage)
      yield* reflect(store, watcher(resources.nodeImage, {}), () => Effect.void)
      yield* store.synced
      const before = store.get("n1")

      yield* api.patch(resources.nodeImage, { name: "n1" }, { status: { desired: 1 } }, "status")
      const statusWritten = Effect.suspend(() => (store.get("n1")?.["status"] === undefined ? Effect.fail("not yet") : Effect.void))
      yield* Effect.eventually(Effect.andThen(Effect.yieldNow, statusWritten))
      const after = store.get("n1")
      expect(after).not.toBe(before)
      expect(after?.["spec"]).toBe(before?.["spec"])
      // With the other counters, which the CRD defaults.
      expect(after?.["status"]).toEqual({ desired: 1, pulling: 0, waiting: 0, succeeded: 0, failed: 0 })
    }).pipe(Effect.scoped, Effect.provide(asOverTheWire))
  )

  it.effect("decodes each version once, keeps declared indexes, and an older watch event never replaces our own write", () =>
    Effect.gen(function* () {
      const decoded: Array<string> = []
      const store = makeStore(resources.nodeImage, {
        decode: (raw) => {
          decoded.push(raw.metadata.resourceVersion ?? "")
          return Object.keys(imagesOf(raw))
        }
      })
      const changes: Array<string> = []
      store.onChange((change) => Effect.sync(() => changes.push(change.type)))
      yield* store.listed([nodeImage("n1", "5")])
      yield* store.written(nodeImage("n1", "7"))
      yield* store.written(nodeImage("n1", "6"))
      expect(store.get("n1")?.metadata.resourceVersion).toBe("7")
      expect(store.view("n1")).toEqual(["nginx"])
      expect(decoded).toEqual(["5", "7"])
      yield* store.listed([])
      expect(store.size()).toBe(0)
      expect(changes).toEqual(["added", "modified", "deleted"])
    })
  )
})

/** A server scripted call by call: each list and watch takes the next step of its script. */
const scripted = (script: {
  readonly lists: Array<() => Effect.Effect<{ items: Array<KubeObject>; resourceVersion: string }, Unavailable>>
  readonly watches: Array<() => Stream.Stream<WatchEvent, Gone | Unavailable>>
}) => {
  const calls: Array<string> = []
  const layer = Layer.succeed(
    KubeApi,
    KubeApi.of({
      list: () =>
        Effect.suspend(() => {
          calls.push("list")
          return script.lists.shift()?.() ?? Effect.never
        }),
      watch: (_resource, options) =>
        Stream.suspend(() => {
          calls.push(`watch@${options.resourceVersion}`)
          return script.watches.shift()?.() ?? Stream.never
        }),
      get: () => Effect.die("not scripted"),
      create: () => Effect.die("not scripted"),
      update: () => Effect.die("not scripted"),
      patch: () => Effect.die("not scripted"),
      delete: () => Effect.die("not scripted")
    })
  )
  return { calls, layer }
}

const unavailable = () => Effect.fail(new Unavailable({ message: "down" }))
const listed =
  (resourceVersion: string, items: Array<KubeObject> = []) =>
  () =>
    Effect.succeed({ items, resourceVersion })

const collect = (events: Array<WatcherEvent>) =>
  Effect.forkChild(Stream.runForEach(watcher(resources.nodeImage, {}), (e) => Effect.sync(() => events.push(e))))

describe("watcher", () => {
  it.effect("retries a failed list after 1 s doubling, capped at 30 s", () => {
    const { calls, layer } = scripted({ lists: Array.from({ length: 8 }, () => unavailable), watches: [] })
    return Effect.gen(function* () {
      const fiber = yield* collect([])
      const listsBy = (seconds: number) =>
        Effect.gen(function* () {
          yield* TestClock.setTime(seconds * 1000)
          return calls.filter((c) => c === "list").length
        })
      // Attempts at 0, 1, 3, 7, 15, 31, 61, 91 s.
      expect(yield* listsBy(0)).toBe(1)
      expect(yield* listsBy(0.999)).toBe(1)
      expect(yield* listsBy(1)).toBe(2)
      expect(yield* listsBy(3)).toBe(3)
      expect(yield* listsBy(7)).toBe(4)
      expect(yield* listsBy(15)).toBe(5)
      expect(yield* listsBy(31)).toBe(6)
      expect(yield* listsBy(60.9)).toBe(6)
      expect(yield* listsBy(61)).toBe(7)
      expect(yield* listsBy(91)).toBe(8)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("logs each retry as a warning with the kind, the error and the delay", () => {
    const { layer } = scripted({ lists: [unavailable, unavailable], watches: [] })
    const logs: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []
    const capture = Logger.layer([
      Logger.make((options) => {
        logs.push({
          level: options.logLevel,
          message: options.message,
          annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
        })
      })
    ])
    return Effect.gen(function* () {
      const fiber = yield* collect([])
      yield* TestClock.setTime(1000)
      expect(logs).toEqual([
        {
          level: "Warn",
          message: ["watch failed; retrying"],
          annotations: { kind: "NodeImage", error: "Unavailable", reason: "down", retryIn: "1s" }
        },
        {
          level: "Warn",
          message: ["watch failed; retrying"],
          annotations: { kind: "NodeImage", error: "Unavailable", reason: "down", retryIn: "2s" }
        }
      ])
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(Layer.merge(layer, capture)))
  })

  it.effect("says an access problem's retries only at DEBUG where an ApiAccess says the problem itself", () => {
    const refused = () =>
      Effect.fail(
        new Unavailable({ message: "refused", connection: { _tag: "Unreachable", reason: "connect ECONNREFUSED", code: "ECONNREFUSED" } })
      )
    const run = (withAccess: boolean) => {
      const { layer } = scripted({ lists: [refused, refused], watches: [] })
      const levels: Array<string> = []
      const capture = Logger.layer([Logger.make((options) => levels.push(options.logLevel))])
      return Effect.gen(function* () {
        const fiber = yield* collect([])
        yield* TestClock.setTime(1000)
        yield* Fiber.interrupt(fiber)
        return levels
      }).pipe(Effect.provide(Layer.mergeAll(layer, capture, withAccess ? ApiAccess.layer : Layer.empty)))
    }
    return Effect.gen(function* () {
      expect(yield* run(false)).toEqual(["Warn", "Warn"])
      expect(yield* run(true)).toEqual([])
    })
  })

  it.effect("starts the backoff over once an event comes through", () => {
    const { calls, layer } = scripted({
      lists: [unavailable, unavailable, listed("10")],
      watches: [() => Stream.fail(new Unavailable({ message: "down" }))]
    })
    return Effect.gen(function* () {
      const events: Array<WatcherEvent> = []
      const fiber = yield* collect(events)
      yield* TestClock.setTime(3000)
      expect(calls).toEqual(["list", "list", "list", "watch@10"])
      expect(events).toEqual([{ _tag: "Listed", objects: [] }])
      // The watch failed after a list went through: 1 s, not 4 s.
      yield* TestClock.setTime(3999)
      expect(calls).toHaveLength(4)
      yield* TestClock.setTime(4000)
      expect(calls).toEqual(["list", "list", "list", "watch@10", "watch@10"])
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })

  it.effect("resumes from the last version seen (bookmarks included) and lists again at once after 410 Gone", () => {
    const n1 = nodeImage("n1", "11")
    const { calls, layer } = scripted({
      lists: [listed("10"), listed("20", [n1])],
      watches: [
        () => Stream.make<Array<WatchEvent>>({ type: "ADDED", object: n1 }, { type: "BOOKMARK", resourceVersion: "15" }),
        () => Stream.fail(new Gone({ kind: "NodeImage", message: "too old" }))
      ]
    })
    return Effect.gen(function* () {
      const events: Array<WatcherEvent> = []
      const fiber = yield* collect(events)
      yield* TestClock.setTime(0)
      expect(calls).toEqual(["list", "watch@10", "watch@15", "list", "watch@20"])
      expect(events.map((e) => e._tag)).toEqual(["Listed", "Applied", "Listed"])
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })
})
