// The tags' `unreported` marks (issue 39): a Succeeded tag whose image its Node's status.images
// leaves out, judged by the daemon (the controller keeps no Node's list). The rule (cap, grace,
// names), and the daemon on TestClock: the mark written once the grace is over, by the Scheduler's
// timer, and again only when the Node's list changes it; none at a restart.
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import type { ImageStatus, ImageTagStatus } from "../../src/api/nodeImage.ts"
import { reportedImages } from "../../src/api/nodeStatusImages.ts"
import { judgeTag, markUnreported } from "../../src/daemon/unreportedTags.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, createNodeImage, launch, node, PatchLog, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const minute = 60_000
const now = Date.parse("2026-12-05T12:00:00Z")
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")
const digest = `sha256:${"e".repeat(64)}`
const rule = { maxImages: 50, graceMs: 2 * minute }

const listing = (count: number, ...extra: ReadonlyArray<string>) =>
  reportedImages({
    status: { images: [...Array.from({ length: count }, (_, i) => `big/image-${i}:1`), ...extra].map((name) => ({ names: [name] })) }
  })
const succeeded = (ago: number, extra: Partial<ImageTagStatus> = {}): ImageTagStatus => ({
  tag: "1",
  phase: "Succeeded",
  completionTime: at(now - ago),
  ...extra
})

describe("judgeTag", () => {
  const judge = (status: ImageTagStatus, list = listing(50), r = rule) => judgeTag("team/small", status, list, now, r)

  it("left out: succeeded long enough ago, on a node whose full list leaves the image out", () => {
    expect(judge(succeeded(3 * minute))).toEqual({ unreported: true })
  })

  it("not when the node lists it, by tag (normalised) or by the digest its pull resolved", () => {
    expect(judge(succeeded(5 * minute), listing(50, "docker.io/team/small:1"))).toEqual({ unreported: false })
    expect(judge(succeeded(5 * minute, { digest }), listing(50, `docker.io/team/small@${digest}`))).toEqual({ unreported: false })
  })

  it("not on a list shorter than the cap: it holds every image there, the kubelet is only late", () => {
    expect(judge(succeeded(30 * minute), listing(49))).toEqual({ unreported: false })
    expect(judge(succeeded(30 * minute), listing(49), { ...rule, maxImages: 10 })).toEqual({ unreported: true })
  })

  it("not yet a tag that just succeeded: judged again when its grace is over", () => {
    expect(judge(succeeded(30_000))).toEqual({ unreported: false, judgeAt: now + 90_000 })
  })

  it("only succeeded tags; and none with a cap of -1 (every image listed) or 0 (none)", () => {
    expect(judge({ tag: "1", phase: "Pulling" })).toEqual({ unreported: false })
    expect(judge({ tag: "1", phase: "Failed", completionTime: at(now - 5 * minute) })).toEqual({ unreported: false })
    expect(judge(succeeded(5 * minute), listing(60), { ...rule, maxImages: -1 })).toEqual({ unreported: false })
    expect(judge(succeeded(5 * minute), listing(60), { ...rule, maxImages: 0 })).toEqual({ unreported: false })
  })
})

describe("markUnreported", () => {
  const statuses = (tags: Record<string, ReadonlyArray<ImageTagStatus>>): Record<string, ImageStatus> =>
    Object.fromEntries(Object.entries(tags).map(([image, t]) => [image, { tags: t }]))

  it("marks the tags left out, unmarks the others, and says when the next grace ends", () => {
    const before = statuses({
      "team/small": [succeeded(5 * minute)],
      "team/listed": [succeeded(5 * minute, { unreported: true })],
      "team/fresh": [succeeded(30_000)],
      "team/fresher": [succeeded(10_000)]
    })
    const { imageStatuses, judgeAt } = markUnreported(before, listing(50, "team/listed:1"), now, rule)
    expect(imageStatuses["team/small"]?.tags[0]).toEqual({ ...succeeded(5 * minute), unreported: true })
    expect(imageStatuses["team/listed"]?.tags[0]).toEqual(succeeded(5 * minute))
    expect(imageStatuses["team/fresh"]).toBe(before["team/fresh"])
    expect(judgeAt).toBe(now + 90_000)
  })

  it("the same objects when nothing changes; every mark as stored while the Node is not read", () => {
    const steady = statuses({ "team/small": [succeeded(5 * minute, { unreported: true })], "team/listed": [succeeded(5 * minute)] })
    expect(markUnreported(steady, listing(50, "team/listed:1"), now, rule).imageStatuses).toBe(steady)
    expect(markUnreported(steady, undefined, now, rule)).toEqual({ imageStatuses: steady, judgeAt: undefined })
  })
})

const Mi = 2 ** 20
const bigImages = ["registry.example/big-a:1", "registry.example/big-b:1", "registry.example/big-c:1"]

/** The Node's status.images as its kubelet writes it: these names, one image each. */
const listImages = (names: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.service(KubeApi), (api) =>
    api.patch(
      resources.node,
      { name: node },
      { status: { images: names.map((name, i) => ({ names: [name], sizeBytes: 1_000_000_000 - i })) } },
      "status"
    )
  )
/** A kubelet's heartbeat: a new Node version whose images are as they were. */
const heartbeat = (n: number) =>
  Effect.flatMap(Effect.service(KubeApi), (api) =>
    api.patch(
      resources.node,
      { name: node },
      { status: { conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: at(n * 10_000) }] } },
      "status"
    )
  )
/** The daemon's NodeImage status writes (the log holds the kubelet's Node status patches above too). */
const writes = Effect.map(
  Effect.service(PatchLog),
  (log) =>
    log.statusPatches.filter(({ body }) => !("images" in (body["status"] as object)) && !("conditions" in (body["status"] as object)))
      .length
)
const small = () => tagStatus("registry.example/small", "1")

describe("daemon: the unreported mark", () => {
  it.effect("written when the grace ends on a node whose full list leaves the image out; again only when the list changes it", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: node } })
      yield* listImages(bigImages)
      yield* createNodeImage({ "registry.example/small": { tags: [tag("1")] } })
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* launch({ nodeStatusMaxImages: 3 })
          yield* advance(5000)
          const pulled = yield* small()
          expect(pulled).toMatchObject({ phase: "Succeeded" })
          expect(pulled?.unreported).toBeUndefined()
          const graceEnds = Date.parse(pulled?.completionTime ?? "") + 2 * minute
          const before = yield* writes
          // Nothing to write until the grace is over: no poll, one timer.
          yield* advance(graceEnds - (yield* Clock.currentTimeMillis) - 1000, 1000)
          expect(yield* writes).toBe(before)
          yield* advance(2000)
          expect(yield* small()).toMatchObject({ phase: "Succeeded", unreported: true })
          expect(yield* writes).toBe(before + 1)
          // Heartbeats, and a new list that still leaves it out: nothing written.
          for (let i = 1; i <= 3; i++) {
            yield* heartbeat(i)
            yield* advance(10_000, 1000)
          }
          yield* listImages(["registry.example/big-d:1", ...bigImages])
          yield* advance(10_000, 1000)
          expect(yield* writes).toBe(before + 1)
          // Listed now: the mark goes, in one write.
          yield* listImages([...bigImages, "registry.example/small:1"])
          yield* advance(10_000, 1000)
          expect((yield* small())?.unreported).toBeUndefined()
          expect(yield* writes).toBe(before + 2)
          // Left out again (the grace long over): marked again at once.
          yield* listImages(bigImages)
          yield* advance(5000, 1000)
          expect((yield* small())?.unreported).toBe(true)
          expect(yield* writes).toBe(before + 3)
        })
      )
      // A restarted daemon finds its mark still right: no write.
      const before = yield* writes
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* launch({ nodeStatusMaxImages: 3 })
          yield* advance(10_000, 1000)
          expect((yield* small())?.unreported).toBe(true)
          expect(yield* writes).toBe(before)
        })
      )
    }).pipe(Effect.provide(testLayer({ synthesizedSize: () => 20 * Mi })))
  )

  it.effect("no mark with the kubelet's default cap on a node listing fewer images: the kubelet is only late", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: node } })
      yield* listImages(bigImages)
      yield* createNodeImage({ "registry.example/small": { tags: [tag("1")] } })
      yield* launch()
      yield* advance(5 * minute, 1000)
      expect(yield* small()).toMatchObject({ phase: "Succeeded" })
      expect((yield* small())?.unreported).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(testLayer({ synthesizedSize: () => 20 * Mi })))
  )
})
