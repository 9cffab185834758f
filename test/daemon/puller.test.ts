import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { invalidTagReason } from "../../src/daemon/unreadableTag.ts"
import {
  advance,
  createNodeImage,
  createUnadmittedNodeImage,
  events,
  launch,
  nodeStatus,
  setImages,
  settle,
  tag,
  tagStatus,
  testLayer
} from "./support/daemonHarness.ts"

const hex = (c: string) => c.repeat(64)
const idA = `sha256:${hex("a")}`
const digest = `sha256:${hex("d")}`

const starts = Effect.map(
  Effect.flatMap(Effect.service(SimulatedRuntime), (f) => f.pulls),
  (pulls) => pulls.map((p) => p.startedAt)
)

describe("daemon: one worker per tag", () => {
  it.effect("pulls a tag: Pulling once the start delay (2 s) is over, then Succeeded with the image id and progress 100", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.setLatency("nginx:1.25", "3 seconds")
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      expect(yield* tagStatus("nginx", "1.25")).toBeUndefined()
      yield* advance(2500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Pulling", version: 0, startTime: "1970-01-01T00:00:00Z" })
      const progress = (yield* tagStatus("nginx", "1.25"))?.progress ?? 0
      expect(progress).toBeGreaterThan(0)
      expect(progress).toBeLessThan(100)
      yield* advance(500)
      const status = yield* tagStatus("nginx", "1.25")
      expect(status).toMatchObject({ phase: "Succeeded", progress: 100, version: 0, completionTime: "1970-01-01T00:00:03Z" })
      expect(status?.imageID).toMatch(/^sha256:/)
      expect(status?.message).toBe('pulled image "nginx:1.25" on node node-1 in 3s')
      expect((yield* fake.pulls).map((p) => p.image)).toEqual(["nginx:1.25"])
      expect(yield* nodeStatus).toMatchObject({ desired: 1, succeeded: 1, pulling: 0, waiting: 0, failed: 0 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("watches only its own NodeImage", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } }, "node-2")
      yield* createNodeImage({ redis: { tags: [tag("7")] } })
      yield* launch()
      yield* advance(2000)
      expect((yield* fake.pulls).map((p) => p.image)).toEqual(["redis:7"])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("picks up a NodeImage created after the daemon started, and tags added later", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* launch()
      yield* createNodeImage({})
      yield* advance(100)
      yield* setImages({ nginx: { tags: [tag("1.25")] } })
      yield* advance(1000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded" })
      expect(yield* fake.pulls).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: a spec it cannot read", () => {
  it.effect("a tag without a name is reported in the log and on the NodeImage; the fixed spec is acted on", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const lines: Array<string> = []
      yield* Effect.gen(function* () {
        yield* createUnadmittedNodeImage({ nginx: { tags: [{ tag: 5 }] } })
        yield* launch()
        yield* advance(1000)
      }).pipe(Effect.provide(loggingLayer({ format: "json", sink: (line) => lines.push(line) })))
      expect(yield* fake.pulls).toEqual([])
      expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
        expect.objectContaining({
          level: "warn",
          msg: "NodeImage spec does not decode in part; the tags that do go on",
          problems: expect.stringContaining("spec.images.nginx.tags[0].tag")
        })
      )
      expect((yield* events).map((e) => [e.type, e.reason, e.involvedObject?.["kind"]])).toEqual([
        ["Warning", invalidTagReason, "NodeImage"]
      ])
      yield* setImages({ nginx: { tags: [tag("1.25")] } })
      yield* advance(1000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  // Issue 24: one tag the daemon cannot read stopped every tag of its node, with no Warning anywhere.
  it.effect("a tag it cannot read fails alone, named field by field, with a Warning on the NodeImage and its job", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "huge", namespace: "default", uid: "u-huge" }
      yield* createUnadmittedNodeImage({
        nginx: {
          tags: [tag("1.25", { pullPolicy: { timeoutSeconds: 1e300, ttlSecondsAfterFinished: 2 ** 62 }, ownerReferences: [owner] })]
        },
        redis: { tags: [tag("7")] }
      })
      yield* launch()
      yield* advance(1000)
      expect((yield* fake.pulls).map((p) => p.image)).toEqual(["redis:7"])
      expect((yield* tagStatus("redis", "7"))?.phase).toBe("Succeeded")
      const failed = yield* tagStatus("nginx", "1.25")
      expect(failed).toMatchObject({ phase: "Failed", version: 0 })
      expect(failed?.message).toBe(
        "spec.images.nginx.tags[0].pullPolicy.timeoutSeconds: expected an integer and a value less than or equal to 2147483647, got 1e+300; " +
          "spec.images.nginx.tags[0].pullPolicy.ttlSecondsAfterFinished: expected an integer and a value less than or equal to 2147483647, " +
          "got 4611686018427388000"
      )
      expect(yield* nodeStatus).toMatchObject({ desired: 2, succeeded: 1, failed: 1, pulling: 0, waiting: 0 })
      const warnings = (yield* events).filter((e) => e.reason === invalidTagReason)
      expect(warnings.map((e) => [e.type, e.involvedObject?.["kind"], e.involvedObject?.["name"]]).sort()).toEqual([
        ["Warning", "ImagePullJob", "huge"],
        ["Warning", "NodeImage", "node-1"]
      ])
      expect(warnings[0]?.message).toBe(`${failed?.message} (node node-1)`)
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "invalid_spec" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: per-node cap", () => {
  it.effect("tags over maxConcurrentPulls report Waiting until a slot frees", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.setLatency("app:b", "3 seconds")
      yield* createNodeImage({ app: { tags: [tag("a"), tag("b"), tag("c")] } })
      yield* launch({ maxConcurrentPulls: 2 })
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Pulling")
      expect((yield* tagStatus("app", "b"))?.phase).toBe("Pulling")
      expect(yield* tagStatus("app", "c")).toMatchObject({ phase: "Waiting", progress: 0 })
      expect(yield* nodeStatus).toMatchObject({ desired: 3, pulling: 2, waiting: 1 })
      expect(yield* metrics.read("preheat_pull_workers", { state: "active" })).toBe(2)
      expect(yield* metrics.read("preheat_pull_workers", { state: "waiting" })).toBe(1)

      yield* advance(1000)
      // a's slot went to c; a's outcome waits for the pulls still running, up to 1 s (statusCadence.ts).
      expect(yield* metrics.read("preheat_pull_workers", { state: "waiting" })).toBe(0)
      yield* advance(1000)
      expect((yield* tagStatus("app", "a"))?.phase).toBe("Succeeded")
      expect(yield* nodeStatus).toMatchObject({ waiting: 0 })
      yield* advance(1000)
      expect(yield* nodeStatus).toMatchObject({ desired: 3, succeeded: 3, pulling: 0 })
      expect(yield* starts).toEqual([0, 0, 1000])
      expect(yield* metrics.read("preheat_pull_workers", { state: "active" })).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the default cap is 2", () =>
    Effect.gen(function* () {
      yield* createNodeImage({ app: { tags: [tag("a"), tag("b"), tag("c"), tag("d")] } })
      yield* launch()
      expect(yield* nodeStatus).toMatchObject({ pulling: 2, waiting: 2 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: attempts, backoff and deadlines", () => {
  it.effect("retries failed attempts after 1 s, 2 s, 4 s and succeeds on the fourth", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("nginx:1.25", { kind: "RuntimeFailure", times: 3, message: "connection reset by peer" })
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(2500)
      // The message of a retry is not a phase change: it goes out with the next rate-limited write.
      const retrying = yield* tagStatus("nginx", "1.25")
      expect(retrying).toMatchObject({ phase: "Pulling" })
      expect(retrying?.message).toMatch(/^attempt [12] of 4 failed: connection reset by peer; retrying in [12]s$/)
      yield* advance(4500)
      expect(yield* starts).toEqual([0, 1000, 3000, 7000])
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Pulling")
      yield* advance(1000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", completionTime: "1970-01-01T00:00:08Z" })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("fails after backoffLimit + 1 attempts with the last error; the backoff stops growing at 30 s", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.fail("nginx:1.25", { kind: "ImageNotFound", times: "always", message: "manifest unknown" })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 7 } })] } })
      yield* launch()
      yield* advance(91_000, 1000)
      expect(yield* starts).toEqual([0, 1000, 3000, 7000, 15_000, 31_000, 61_000, 91_000])
      const status = yield* tagStatus("nginx", "1.25")
      expect(status).toMatchObject({ phase: "Failed", completionTime: "1970-01-01T00:01:31Z" })
      expect(status?.message).toBe('failed to pull image "nginx:1.25" after 8 attempts: image not found: manifest unknown')
      expect(yield* nodeStatus).toMatchObject({ failed: 1, pulling: 0 })
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "not_found" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the default is 4 attempts (backoffLimit 3)", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("nginx:1.25", { kind: "RuntimeFailure", times: "always" })
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(20_000, 1000)
      expect(yield* starts).toEqual([0, 1000, 3000, 7000])
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Failed")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("each attempt is cut off at timeoutSeconds", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { timeoutSeconds: 5, backoffLimit: 1 } })] } })
      yield* launch()
      yield* advance(10_900)
      const pulls = yield* fake.pulls
      expect(pulls.map((p) => [p.startedAt, p.endedAt, Duration.toMillis(p.timeout)])).toEqual([
        [0, 5000, 5000],
        [6000, undefined, 5000]
      ])
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Pulling")
      yield* advance(100)
      const status = yield* tagStatus("nginx", "1.25")
      expect(status).toMatchObject({ phase: "Failed", completionTime: "1970-01-01T00:00:11Z" })
      expect(status?.message).toBe('failed to pull image "nginx:1.25" after 2 attempts: pull timed out after 5s')
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("activeDeadlineSeconds bounds the attempt: counted from createdAt, then Failed", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.hang("nginx:1.25")
      yield* TestClock.adjust(4000)
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { timeoutSeconds: 600, activeDeadlineSeconds: 10 } })] } })
      yield* launch()
      yield* advance(6000)
      const pulls = yield* fake.pulls
      expect(pulls.map((p) => [p.startedAt, Duration.toMillis(p.timeout), p.outcome._tag])).toEqual([[4000, 6000, "Failed"]])
      const status = yield* tagStatus("nginx", "1.25")
      expect(status).toMatchObject({ phase: "Failed", completionTime: "1970-01-01T00:00:10Z" })
      expect(status?.message).toBe(
        'failed to pull image "nginx:1.25": pulling exceeds the activeDeadlineSeconds; last error: pull timed out after 6s'
      )
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "deadline" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the last attempt ended by the deadline reports the deadline", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* fake.hang("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 0, activeDeadlineSeconds: 5 } })] } })
      yield* launch()
      yield* advance(5000)
      expect((yield* tagStatus("nginx", "1.25"))?.message).toBe(
        'failed to pull image "nginx:1.25": pulling exceeds the activeDeadlineSeconds; last error: pull timed out after 5s'
      )
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "deadline" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("no attempt starts past the deadline: a retry whose backoff would end there fails at once", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.fail("nginx:1.25", { kind: "RuntimeFailure", times: "always", after: "3 seconds" })
      yield* createNodeImage({
        nginx: { tags: [tag("1.25", { pullPolicy: { timeoutSeconds: 3, activeDeadlineSeconds: 5, backoffLimit: 5 } })] }
      })
      yield* launch()
      yield* advance(6000)
      const pulls = yield* fake.pulls
      // 3 s attempt, 1 s backoff, then only 1 s left before the deadline; after that a 2 s backoff cannot fit.
      expect(pulls.map((p) => [p.startedAt, Duration.toMillis(p.timeout)])).toEqual([
        [0, 3000],
        [4000, 1000]
      ])
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Failed", completionTime: "1970-01-01T00:00:05Z" })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a tag already past its deadline fails without pulling", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* TestClock.adjust(20_000)
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { activeDeadlineSeconds: 10 } })] } })
      yield* launch()
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({
        phase: "Failed",
        message: 'failed to pull image "nginx:1.25": pulling exceeds the activeDeadlineSeconds'
      })
      expect(yield* fake.pulls).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: imagePullPolicy and references", () => {
  for (const key of ["nginx", "docker.io/nginx", "library/nginx", "docker.io/library/nginx", "index.docker.io/library/nginx"]) {
    it.effect(`IfNotPresent: an image on the node by tag succeeds at once without pulling (${key})`, () =>
      Effect.gen(function* () {
        const fake = yield* SimulatedRuntime
        const metrics = yield* Metrics
        yield* createNodeImage({ [key]: { tags: [tag("1.25")] } })
        yield* launch()
        expect(yield* tagStatus(key, "1.25")).toMatchObject({ phase: "Succeeded", progress: 100, imageID: idA })
        expect((yield* tagStatus(key, "1.25"))?.message).toContain("already present")
        expect(yield* fake.pulls).toEqual([])
        expect(yield* metrics.read("preheat_pulls_total", { result: "succeeded", reason: "present" })).toBe(1)
      }).pipe(Effect.scoped, Effect.provide(testLayer({ images: [{ references: ["docker.io/library/nginx:1.25"], id: idA }] })))
    )
  }

  it.effect("IfNotPresent: an image on the node by digest succeeds at once", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ busybox: { tags: [tag(digest)] } })
      yield* launch()
      expect(yield* tagStatus("busybox", digest)).toMatchObject({ phase: "Succeeded", imageID: idA })
      expect(yield* fake.pulls).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ images: [{ references: [`docker.io/library/busybox@${digest}`], id: idA }] })))
  )

  it.effect("IfNotPresent: the same tag is not the same digest, so a digest tag is pulled", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ busybox: { tags: [tag(digest)] } })
      yield* launch()
      yield* advance(1000)
      expect((yield* fake.pulls).map((p) => p.image)).toEqual([`busybox@${digest}`])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ images: [{ references: ["busybox:1.36"], id: idA }] })))
  )

  it.effect("IfNotPresent: the image's absence is ImageStatus's answer alone, as the kubelet's; the image list is not read", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(1000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded" })
      const asked = (yield* fake.calls).filter((c) => c.method === "imageStatus" || c.method === "listImages")
      expect(asked.map((c) => c.method)).toEqual(["imageStatus", "imageStatus"])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ images: [{ references: ["docker.io/library/redis:7"], id: idA }] })))
  )

  it.effect("Always: pulls even though the node has the image", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.push({ reference: "nginx:1.25", id: `sha256:${hex("b")}` })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { imagePullPolicy: "Always" })] } })
      yield* launch()
      yield* advance(1000)
      expect((yield* fake.pulls).map((p) => p.image)).toEqual(["nginx:1.25"])
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", imageID: `sha256:${hex("b")}` })
    }).pipe(Effect.scoped, Effect.provide(testLayer({ images: [{ references: ["docker.io/library/nginx:1.25"], id: idA }] })))
  )

  it.effect("a digest tag is pulled as name@sha256:..., never name:sha256:...", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ "registry.example.com/team/app": { tags: [tag(digest)] } })
      yield* launch()
      yield* advance(1000)
      expect((yield* fake.pulls).map((p) => p.image)).toEqual([`registry.example.com/team/app@${digest}`])
      expect((yield* tagStatus("registry.example.com/team/app", digest))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("sandboxConfig is passed to the runtime as given", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const sandboxConfig = { labels: { team: "a" }, annotations: { "example.com/why": "preheat" } }
      yield* createNodeImage({ nginx: { sandboxConfig, tags: [tag("1.25")] } })
      yield* launch()
      expect((yield* fake.pulls)[0]?.sandboxConfig).toEqual(sandboxConfig)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: spec changes and restarts", () => {
  it.effect("a removed tag stops its worker, cancels the pull and leaves the status", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] }, redis: { tags: [tag("7")] } })
      const daemon = yield* launch()
      yield* advance(2000)
      expect([...daemon.running().keys()]).toEqual(["nginx 1.25"])
      yield* setImages({ redis: { tags: [tag("7")] } })
      yield* advance(100)
      expect((yield* fake.pulls).find((p) => p.image === "nginx:1.25")?.outcome._tag).toBe("Cancelled")
      expect(daemon.running().size).toBe(0)
      const status = yield* nodeStatus
      expect(Object.keys(status.imageStatuses ?? {})).toEqual(["redis"])
      expect(status).toMatchObject({ desired: 1, succeeded: 1, pulling: 0 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a new version interrupts the running worker and pulls again", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.hang("nginx:1.25")
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(1000)
      yield* fake.setLatency("nginx:1.25", "2 seconds")
      yield* setImages({ nginx: { tags: [tag("1.25", { version: 1 })] } })
      yield* advance(100)
      expect((yield* fake.pulls).map((p) => p.outcome._tag)).toEqual(["Cancelled", "InFlight"])
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Pulling", version: 1 })
      yield* advance(2000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", version: 1 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a new version of a finished tag is pulled again (Always)", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { imagePullPolicy: "Always" })] } })
      yield* launch()
      yield* advance(1000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      yield* setImages({ nginx: { tags: [tag("1.25", { imagePullPolicy: "Always", version: 1 })] } })
      yield* advance(1000)
      expect(yield* fake.pulls).toHaveLength(2)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", version: 1 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("after a restart finished tags are not pulled again; the one in flight starts over", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.setLatency("app:big", "10 seconds")
      yield* fake.fail("app:missing", { kind: "ImageNotFound", times: "always" })
      yield* createNodeImage({
        app: {
          tags: [
            tag("small", { imagePullPolicy: "Always" }),
            tag("big", { imagePullPolicy: "Always" }),
            tag("missing", { imagePullPolicy: "Always", pullPolicy: { backoffLimit: 0 } })
          ]
        }
      })
      const first = yield* Scope.make()
      yield* launch({ maxConcurrentPulls: 3 }).pipe(Scope.provide(first))
      yield* advance(2000)
      expect((yield* tagStatus("app", "small"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("app", "missing"))?.phase).toBe("Failed")
      expect((yield* tagStatus("app", "big"))?.phase).toBe("Pulling")
      yield* Scope.close(first, Exit.void)
      yield* settle
      expect((yield* fake.pulls).find((p) => p.image === "app:big")?.outcome._tag).toBe("Cancelled")

      yield* launch({ maxConcurrentPulls: 3 })
      yield* advance(10_000)
      expect((yield* tagStatus("app", "big"))?.phase).toBe("Succeeded")
      expect((yield* fake.pulls).map((p) => p.image).sort()).toEqual(["app:big", "app:big", "app:missing", "app:small"])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
