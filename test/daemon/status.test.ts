import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { InMemoryKubeStore } from "../../harness/layers/inMemoryKubeApi.ts"
import { Unavailable } from "../../src/kube/errors.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import {
  advance,
  createNodeImage,
  events,
  getNodeImage,
  launch,
  node,
  nodeStatus,
  PatchLog,
  setImages,
  settle,
  tag,
  tagStatus,
  testLayer
} from "./support/daemonHarness.ts"
import { rawControls } from "../support/hostileText.ts"

/** NodeImage first, then jobs by name. */
const byInvolved = (a: { readonly involvedObject?: Record<string, unknown> }, b: { readonly involvedObject?: Record<string, unknown> }) => {
  const key = (e: { readonly involvedObject?: Record<string, unknown> }) =>
    `${e.involvedObject?.["kind"] === "NodeImage" ? 0 : 1}/${String(e.involvedObject?.["name"])}`
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0
}

const statusOf = (body: Record<string, unknown>) => body["status"] as Record<string, unknown>

/**
 * The controller's mark of a silent daemon's tag (src/controller/nodeImage/reconcile.ts failTags):
 * a JSON patch of the status, which the PatchLog does not count as the daemon's.
 */
const markFailed = (image: string, tagName: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const status = (yield* getNodeImage)["status"] as { imageStatuses: Record<string, { tags: Array<{ tag: string }> }> }
    const index = status.imageStatuses[image]!.tags.findIndex((t) => t.tag === tagName)
    yield* api.patch(
      resources.nodeImage,
      { name: node },
      [
        { op: "replace", path: `/status/imageStatuses/${image}/tags/${index}/phase`, value: "Failed" },
        { op: "replace", path: "/status/pulling", value: 0 },
        { op: "replace", path: "/status/failed", value: 1 }
      ],
      "status"
    )
  }).pipe(Effect.orDie)

/** For tests of other things than the start delay: a pull's Pulling is written at once. */
const startAtOnce = { pullingWriteDelay: 0 }

describe("daemon: status writes", () => {
  it.effect("a pull that ends within the start delay (2 s) writes only its outcome", () =>
    Effect.gen(function* () {
      const log = yield* PatchLog
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* launch()
      yield* advance(999)
      expect(yield* tagStatus("app", "a")).toBeUndefined()
      yield* advance(1)
      expect(log.statusPatches.map((p) => p.at)).toEqual([1000])
      expect(yield* tagStatus("app", "a")).toMatchObject({ phase: "Succeeded", startTime: "1970-01-01T00:00:00Z" })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a longer pull shows Pulling when the start delay is over, then progress every 2 s", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:a", "7 seconds")
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* launch()
      yield* advance(1999)
      expect(log.statusPatches).toEqual([])
      yield* advance(1)
      expect(yield* tagStatus("app", "a")).toMatchObject({ phase: "Pulling", startTime: "1970-01-01T00:00:00Z" })
      yield* advance(5000)
      expect(log.statusPatches.map((p) => p.at)).toEqual([2000, 4000, 6000, 7000])
      expect(yield* tagStatus("app", "a")).toMatchObject({ phase: "Succeeded", progress: 100 })
    }).pipe(Effect.scoped, Effect.provide(testLayer({ progressSteps: 100 })))
  )

  it.effect("a burst of reports at one instant becomes one write", () =>
    Effect.gen(function* () {
      const log = yield* PatchLog
      yield* createNodeImage({ app: { tags: ["a", "b", "c", "d", "e"].map((t) => tag(t)) } })
      yield* launch({ ...startAtOnce, maxConcurrentPulls: 5 })
      expect(log.statusPatches.map((p) => p.at)).toEqual([0])
      expect(yield* nodeStatus).toMatchObject({ desired: 5, pulling: 5 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("progress is written at most once every 2 s (upstream's 0.5 status writes a second); an outcome alone goes out at once", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:a", "9 seconds")
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* launch()
      yield* advance(9000)
      // Pulling at the start delay's end, then progress 2 s after each write (100 reports became 4
      // writes); the Succeeded at once, no other pull running.
      expect(log.statusPatches.map((p) => p.at)).toEqual([2000, 4000, 6000, 8000, 9000])
      expect(yield* tagStatus("app", "a")).toMatchObject({ phase: "Succeeded", progress: 100 })
    }).pipe(Effect.scoped, Effect.provide(testLayer({ progressSteps: 100 })))
  )

  it.effect("an outcome waits for the node's other pulls, up to 1 s: tags that finish close together are reported in one write", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      // Ten tags given together (ten jobs' tasks in one write), finishing from 0.8 to 1.25 s.
      const tags = Array.from({ length: 10 }, (_, i) => `t${i}`)
      for (const [i, name] of tags.entries()) yield* fake.setLatency(`app:${name}`, `${800 + 50 * i} millis`)
      yield* createNodeImage({ app: { tags: tags.map((name) => tag(name)) } })
      yield* launch({ maxConcurrentPulls: 10 })
      yield* advance(2000)
      // One write, as the last one finished (nothing else running then), where each outcome went alone before.
      expect(log.statusPatches.map((p) => p.at)).toEqual([1250])
      expect(yield* nodeStatus).toMatchObject({ desired: 10, succeeded: 10 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("an outcome waits 1 s at most for the other pulls, and goes out with the Pulling of one that outlives its delay", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:long", "10 seconds")
      yield* fake.setLatency("web:quick", "200 millis")
      yield* createNodeImage({ app: { tags: [tag("long")] }, web: { tags: [tag("quick")] } })
      yield* launch()
      yield* advance(1300)
      // quick ended at 0.2 s while long ran: written 1 s later, long's Pulling with it.
      expect(log.statusPatches.map((p) => p.at)).toEqual([1200])
      expect(yield* tagStatus("web", "quick")).toMatchObject({ phase: "Succeeded" })
      expect(yield* tagStatus("app", "long")).toMatchObject({ phase: "Pulling" })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("an outcome pending when a longer pull's Pulling falls due goes out in that write", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:long", "9 seconds")
      yield* fake.setLatency("app:short", "1500 millis")
      yield* createNodeImage({ app: { tags: [tag("long"), tag("short")] } })
      yield* launch()
      yield* advance(9000)
      // short's outcome (1.5 s) and long's Pulling (2 s) in one write; then long's progress every 2
      // s and its outcome at once.
      expect(log.statusPatches.map((p) => p.at)).toEqual([2000, 4000, 6000, 8000, 9000])
      expect(log.statusPatches[0]?.body).toMatchObject({
        status: {
          imageStatuses: {
            app: {
              tags: [
                { tag: "long", phase: "Pulling" },
                { tag: "short", phase: "Succeeded" }
              ]
            }
          }
        }
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("each write is a merge patch of the difference, with no resourceVersion to conflict on", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:a", "3 seconds")
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* launch(startAtOnce)
      yield* advance(2500)
      const progress = log.statusPatches.find((p) => p.at === 2000)
      expect(progress).toBeDefined()
      expect(Object.keys(progress!.body)).toEqual(["status"])
      expect(Object.keys(statusOf(progress!.body))).toEqual(["imageStatuses"])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a task written between the daemon's read and its status patch neither fails it nor costs a re-read", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const store = yield* InMemoryKubeStore
      const log = yield* PatchLog
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      let reads = 0
      yield* store.setFault((request) => {
        if (request.verb === "get") reads++
        return undefined
      })
      // The controller's next task lands just before the daemon's first status patch.
      log.beforeNextStatusPatch = Effect.asVoid(
        api.patch(resources.nodeImage, { name: node }, { spec: { images: { web: { tags: [tag("b")] } } } })
      )
      yield* launch(startAtOnce)
      yield* advance(1000)
      // Every patch landed as sent: none was refused and read again.
      expect(reads).toBe(0)
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("web", "b"))?.phase).toBe("Succeeded")
      expect(yield* nodeStatus).toMatchObject({ desired: 2, succeeded: 2, pulling: 0 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("another writer's status change that lands before a patch is put right by one more write", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:a", "10 seconds")
      yield* fake.setLatency("web:b", "500 millis")
      yield* createNodeImage({ app: { tags: [tag("a")] }, web: { tags: [tag("b")] } })
      yield* launch({ ...startAtOnce, maxConcurrentPulls: 2, outcomeWriteDelay: 0 })
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Pulling")
      // The controller fails app:a as if the daemon had gone silent, just before the daemon writes
      // web:b's outcome: that patch does not touch app, so the mark would stay.
      log.beforeNextStatusPatch = markFailed("app", "a").pipe(Effect.provideService(KubeApi, yield* KubeApi))
      yield* advance(500)
      expect((yield* tagStatus("web", "b"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Pulling")
      expect(yield* nodeStatus).toMatchObject({ desired: 2, succeeded: 1, pulling: 1, failed: 0 })
      expect(log.statusPatches.map((p) => p.at)).toEqual([0, 500, 500])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ progressSteps: 0 })))
  )

  it.effect("another writer's status change seen by the watch is checked against what the daemon wants", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const log = yield* PatchLog
      yield* fake.setLatency("app:a", "10 seconds")
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* launch(startAtOnce)
      expect(log.statusPatches.map((p) => p.at)).toEqual([0])
      yield* advance(100)
      yield* markFailed("app", "a")
      yield* advance(100)
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Pulling")
      expect(yield* nodeStatus).toMatchObject({ pulling: 1, failed: 0 })
      expect(log.statusPatches.map((p) => p.at)).toEqual([0, 100])
      // A label (no status change) is looked at and costs no write.
      const api = yield* KubeApi
      yield* api.patch(resources.nodeImage, { name: node }, { metadata: { labels: { zone: "b" } } })
      yield* advance(100)
      expect(log.statusPatches.map((p) => p.at)).toEqual([0, 100])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ progressSteps: 0 })))
  )

  it.effect("a write the API server refuses is retried until it lands", () =>
    Effect.gen(function* () {
      const store = yield* InMemoryKubeStore
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* store.setFault((request) => (request.verb === "patch" ? new Unavailable({ message: "etcd leader changed" }) : undefined))
      const log = yield* PatchLog
      yield* launch(startAtOnce)
      yield* advance(2900)
      expect(yield* tagStatus("app", "a")).toBeUndefined()
      yield* store.setFault(undefined)
      // Retried after 1 s, then 2 s: the pull's Succeeded at 1 s did not cut the backoff short.
      expect(log.statusPatches.map((p) => p.at)).toEqual([0, 1000])
      yield* advance(100)
      expect(log.statusPatches.map((p) => p.at)).toEqual([0, 1000, 3000])
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("drops the status of tags and images that left the spec, keeps fields it does not own", () =>
    Effect.gen(function* () {
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      // A field this schema does not have: kept by a server whose schema keeps unknown fields.
      yield* (yield* KubeApi).patch(
        resources.nodeImage,
        { name: node },
        {
          status: {
            note: "kept",
            imageStatuses: {
              gone: { tags: [{ tag: "1", phase: "Succeeded", version: 0 }] },
              app: {
                tags: [
                  { tag: "old", phase: "Failed", version: 0 },
                  { tag: "a", phase: "Pulling", version: 0 }
                ]
              }
            }
          }
        },
        "status"
      )
      yield* launch()
      yield* advance(1000)
      const status = yield* nodeStatus
      expect(status["note"]).toBe("kept")
      expect(Object.keys(status.imageStatuses ?? {})).toEqual(["app"])
      expect(status.imageStatuses?.["app"]?.tags.map((t) => [t.tag, t.phase])).toEqual([["a", "Succeeded"]])
      expect(status).toMatchObject({ desired: 1, succeeded: 1 })
    }).pipe(Effect.scoped, Effect.provide(testLayer({}, { admission: false })))
  )

  it.effect("a tag the controller marked Failed for this version is left alone", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      yield* api.patch(
        resources.nodeImage,
        { name: node },
        {
          status: {
            imageStatuses: { app: { tags: [{ tag: "a", phase: "Failed", version: 0, message: "node has not responded for a long time" }] } }
          }
        },
        "status"
      )
      yield* launch()
      yield* advance(1000)
      expect(yield* fake.pulls).toEqual([])
      expect(yield* tagStatus("app", "a")).toMatchObject({ phase: "Failed", message: "node has not responded for a long time" })
      expect(yield* nodeStatus).toMatchObject({ desired: 1, failed: 1 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: firstSyncStatus", () => {
  it.effect("is set once every tag present at start has finished: Failed when one failed", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("app:b", { kind: "ImageNotFound", times: "always" })
      yield* createNodeImage({ app: { tags: [tag("a"), tag("b", { pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch({ outcomeWriteDelay: 0 })
      expect((yield* tagStatus("app", "b"))?.phase).toBe("Failed")
      expect((yield* nodeStatus)["firstSyncStatus"]).toBeUndefined()
      yield* advance(1000)
      const first = { syncAt: "1970-01-01T00:00:01Z", status: "Failed", message: "1 of 2 images failed to pull: app:b" }
      expect((yield* nodeStatus)["firstSyncStatus"]).toEqual(first)
      yield* setImages({ app: { tags: [tag("a"), tag("b", { pullPolicy: { backoffLimit: 0 } }), tag("c")] } })
      yield* advance(2000)
      expect((yield* tagStatus("app", "c"))?.phase).toBe("Succeeded")
      expect((yield* nodeStatus)["firstSyncStatus"]).toEqual(first)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("Succeeded at once for an empty NodeImage; a tag removed before finishing no longer counts", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("app:a")
      yield* createNodeImage({})
      yield* launch()
      expect((yield* nodeStatus)["firstSyncStatus"]).toEqual({
        syncAt: "1970-01-01T00:00:00Z",
        status: "Succeeded",
        message: "no images to pull"
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a tag removed before finishing no longer holds it back", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("app:a")
      yield* createNodeImage({ app: { tags: [tag("a"), tag("b")] } })
      yield* launch()
      yield* advance(500)
      yield* setImages({ app: { tags: [tag("b")] } })
      yield* advance(500)
      expect((yield* nodeStatus)["firstSyncStatus"]).toEqual({
        syncAt: "1970-01-01T00:00:01Z",
        status: "Succeeded",
        message: "1 image pulled"
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("is kept as it is across a restart", () =>
    Effect.gen(function* () {
      yield* createNodeImage({ app: { tags: [tag("a")] } })
      const first = yield* Scope.make()
      yield* launch().pipe(Scope.provide(first))
      yield* advance(1000)
      const synced = (yield* nodeStatus)["firstSyncStatus"]
      expect(synced).toMatchObject({ status: "Succeeded", syncAt: "1970-01-01T00:00:01Z" })
      yield* Scope.close(first, Exit.void)
      yield* setImages({ app: { tags: [tag("a"), tag("b")] } })
      yield* advance(5000)
      yield* launch()
      yield* advance(1000)
      expect((yield* tagStatus("app", "b"))?.phase).toBe("Succeeded")
      expect((yield* nodeStatus)["firstSyncStatus"]).toEqual(synced)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: events", () => {
  const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", namespace: "apps", name: "warm-nginx", uid: "uid-1" }

  it.effect("no Event for a successful pull: the NodeImage tag status says it, the job's events count it", () =>
    Effect.gen(function* () {
      const other = { ...owner, name: "second", uid: "uid-2" }
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { ownerReferences: [owner, other] })] } })
      yield* launch()
      yield* advance(1000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({
        phase: "Succeeded",
        message: 'pulled image "nginx:1.25" on node node-1 in 1s'
      })
      expect(yield* events).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("PullImageFailed (Warning) with the reason, once per pull, not per attempt", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("nginx:1.25", { kind: "ImageNotFound", times: "always", message: "manifest unknown" })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { ownerReferences: [owner], pullPolicy: { backoffLimit: 1 } })] } })
      yield* launch()
      yield* advance(2000)
      const recorded = [...(yield* events)].sort(byInvolved)
      expect(recorded.map((e) => [e.type, e.reason, e.metadata.namespace])).toEqual([
        ["Warning", "PullImageFailed", "default"],
        ["Warning", "PullImageFailed", "apps"]
      ])
      expect(recorded[0]?.message).toBe(
        'failed to pull image "nginx:1.25" after 2 attempts: image not found: manifest unknown (node node-1)'
      )
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a hand-written tag with a hostile reference: the status message and events quote it escaped", () =>
    Effect.gen(function* () {
      // The NodeImage is editable: nothing but the daemon's own words stands between this tag and a terminal.
      const hostileTag = "1.25\x1b]0;pwned\x07\u202e"
      yield* createNodeImage({ nginx: { tags: [tag(hostileTag, { ownerReferences: [owner], pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch()
      yield* advance(2000)
      const quoted = '"nginx:1.25\\x1b]0;pwned\\a\\u202e"'
      const status = yield* tagStatus("nginx", hostileTag)
      expect(status?.phase).toBe("Failed")
      expect(status?.message).toBe(`failed to pull image ${quoted}: invalid image reference: invalid image ${quoted}: invalid tag format`)
      const recorded = [...(yield* events)].sort(byInvolved)
      expect(recorded.map((e) => e.reason)).toEqual(["PullImageFailed", "PullImageFailed"])
      for (const event of recorded) {
        expect(event.message).toBe(`${status?.message} (node node-1)`)
        expect(rawControls(event.message ?? "")).toEqual([])
      }
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a runtime's message with raw control characters is escaped and cut in the status message and events", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const runtimeWords = `failed to pull and unpack image nginx:1.25\x1b]0;pwned\x07\u202e: ${"x".repeat(5000)}`
      yield* fake.fail("nginx:1.25", { kind: "RuntimeFailure", times: "always", message: runtimeWords })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { ownerReferences: [owner], pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch()
      yield* advance(2000)
      const message = (yield* tagStatus("nginx", "1.25"))?.message ?? ""
      expect(
        message.startsWith('failed to pull image "nginx:1.25": failed to pull and unpack image nginx:1.25\\x1b]0;pwned\\a\\u202e: xxx')
      ).toBe(true)
      expect(message.endsWith("x...")).toBe(true)
      expect(message.length).toBeLessThan(1100)
      expect(rawControls(message)).toEqual([])
      // The event says the same, cut once more to an event's 1024 characters (kube/events.ts).
      for (const event of yield* events) {
        expect(event.message?.startsWith(message.slice(0, 1000))).toBe(true)
        expect(event.message?.length).toBe(1024 + 3)
      }
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("no event for a pull stopped because its tag was removed", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { ownerReferences: [owner] })] } })
      yield* launch()
      yield* advance(500)
      yield* setImages({})
      yield* advance(500)
      yield* settle
      expect(yield* events).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
