import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { bandwidthLatency, type FailureKind, type SimulatedRuntimeConfig } from "../../../../harness/layers/simulatedRuntime/config.ts"
import { makeSimulatedRuntime, SimulatedRuntime } from "../../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { CriRuntime, type PullProgress, type PullRequest } from "../../../../src/cri/CriRuntime.ts"
import { registryCredential } from "../../../../src/cri/credentials.ts"

const hex = (c: string): string => c.repeat(64)
const idA = `sha256:${hex("a")}`
const idB = `sha256:${hex("b")}`
const digestA = `sha256:${hex("d")}`

const pull = (image: string, extra: Partial<PullRequest> = {}): PullRequest => ({
  image,
  timeout: Duration.minutes(5),
  ...extra
})

const nginxOnNode: SimulatedRuntimeConfig = {
  images: [{ references: ["nginx:1.25", `docker.io/library/nginx@${digestA}`], id: idA, size: 1000 }]
}

/** Forks a pull, lets it start, and hands back its fiber (the pull's Result as the value). */
const startPull = (runtime: CriRuntime["Service"], request: PullRequest) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.result(runtime.pullImage(request)))
    yield* TestClock.adjust(0)
    return fiber
  })

describe("SimulatedRuntime: images present at start", () => {
  it.effect("finds them by familiar name, full name, digest and id", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime(nginxOnNode)
      for (const name of ["nginx:1.25", "docker.io/nginx:1.25", "index.docker.io/library/nginx:1.25", `nginx@${digestA}`, idA, hex("a")]) {
        const status = yield* fake.runtime.imageStatus(name)
        assert.isTrue(Option.isSome(status), name)
        assert.strictEqual(Option.getOrThrow(status).id, idA)
      }
      const info = Option.getOrThrow(yield* fake.runtime.imageStatus("nginx:1.25"))
      assert.deepStrictEqual(info.repoTags, ["docker.io/library/nginx:1.25"])
      assert.deepStrictEqual(info.repoDigests, [`docker.io/library/nginx@${digestA}`])
      assert.strictEqual(info.size, 1000)
    })
  )

  it.effect("does not confuse tags, digests and registries", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime(nginxOnNode)
      for (const name of ["nginx", "nginx:1.26", `nginx@sha256:${hex("e")}`, "quay.io/nginx:1.25", "library/other:1.25"]) {
        assert.isTrue(Option.isNone(yield* fake.runtime.imageStatus(name)), name)
      }
      assert.lengthOf(yield* fake.runtime.listImages, 1)
    })
  )

  it.effect("a bare name means latest", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ images: [{ references: ["busybox"], id: idB }] })
      assert.isTrue(Option.isSome(yield* fake.runtime.imageStatus("busybox:latest")))
    })
  )
})

describe("SimulatedRuntime: pull latency on the Clock", () => {
  it.effect("a pull takes the configured latency, then the image is present", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "2 seconds", registry: [{ reference: "nginx:1.25", id: idA }] })
      const fiber = yield* startPull(fake.runtime, pull("nginx:1.25"))

      yield* TestClock.adjust("1999 millis")
      assert.isFalse(yield* fake.hasImage("nginx:1.25"))
      assert.deepStrictEqual((yield* fake.pulls)[0]?.outcome, { _tag: "InFlight" })

      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Result.succeed(idA))
      assert.isTrue(yield* fake.hasImage("docker.io/library/nginx:1.25"))
      const [record] = yield* fake.pulls
      assert.strictEqual(record?.startedAt, 0)
      assert.strictEqual(record?.endedAt, 2000)
      assert.deepStrictEqual(record?.outcome, { _tag: "Succeeded", imageId: idA })
    })
  )

  it.effect("latency can depend on size and bandwidth", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({
        latency: bandwidthLatency({ bytesPerSecond: 10_000_000, overhead: "100 millis" }),
        registry: [
          { reference: "big:1", id: idA, size: 50_000_000 },
          { reference: "small:1", id: idB, size: 1_000_000 }
        ]
      })
      const big = yield* startPull(fake.runtime, pull("big:1"))
      const small = yield* startPull(fake.runtime, pull("small:1"))
      yield* TestClock.adjust("200 millis")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(small)))
      assert.isFalse(yield* fake.hasImage("big:1"))
      yield* TestClock.adjust("4900 millis")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(big)))
      assert.deepStrictEqual(
        (yield* fake.pulls).map((p) => p.endedAt),
        [5100, 200]
      )
    })
  )

  it.effect("setLatency overrides one image", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "1 second" })
      yield* fake.setLatency("slow:1", "1 minute")
      const fiber = yield* startPull(fake.runtime, pull("docker.io/library/slow:1"))
      yield* TestClock.adjust("59 seconds")
      assert.isFalse(yield* fake.hasImage("slow:1"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(fiber)))
    })
  )

  it.effect("concurrent pulls run side by side", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "3 seconds" })
      const fibers = yield* Effect.forEach(["a:1", "b:1", "c:1"], (image) => startPull(fake.runtime, pull(image)))
      yield* TestClock.adjust("3 seconds")
      for (const fiber of fibers) assert.isTrue(Result.isSuccess(yield* Fiber.join(fiber)))
      assert.lengthOf(yield* fake.images, 3)
    })
  )
})

describe("SimulatedRuntime: request timeout", () => {
  it.effect("fails with DeadlineExceeded at the timeout when the pull takes longer", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds" })
      const fiber = yield* startPull(fake.runtime, pull("nginx:1.25", { timeout: Duration.seconds(4) }))
      yield* TestClock.adjust("4 seconds")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "DeadlineExceeded")
      const [record] = yield* fake.pulls
      assert.strictEqual(record?.endedAt, 4000)
      assert.strictEqual(record?.outcome._tag, "Failed")
      assert.isFalse(yield* fake.hasImage("nginx:1.25"))
    })
  )

  it.effect("a pull that takes exactly the timeout succeeds", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "4 seconds" })
      const fiber = yield* startPull(fake.runtime, pull("nginx:1.25", { timeout: Duration.seconds(4) }))
      yield* TestClock.adjust("4 seconds")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(fiber)))
    })
  )

  it.effect("hang: never finishes, so the deadline ends it", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime()
      yield* fake.hang("nginx:1.25")
      const fiber = yield* startPull(fake.runtime, pull("nginx:1.25", { timeout: Duration.minutes(2) }))
      yield* TestClock.adjust("119 seconds")
      assert.strictEqual((yield* fake.pulls)[0]?.outcome._tag, "InFlight")
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "DeadlineExceeded")
    })
  )
})

describe("SimulatedRuntime: scripted failures", () => {
  const kinds: ReadonlyArray<FailureKind> = ["Unauthorized", "ImageNotFound", "RuntimeUnavailable", "InvalidReference", "RuntimeFailure"]

  it.effect.each(kinds)("fails the next 2 pulls with %s, then pulls", (kind) =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "1 second" })
      yield* fake.fail("quay.io/org/app:1", { kind, times: 2 })
      for (let i = 0; i < 2; i++) {
        const error = yield* Effect.flip(fake.runtime.pullImage(pull("quay.io/org/app:1")))
        assert.strictEqual(error._tag, kind)
      }
      const fiber = yield* startPull(fake.runtime, pull("quay.io/org/app:1"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(fiber)))
      // Failures came at once: no time passed.
      assert.deepStrictEqual(
        (yield* fake.pulls).map((p) => [p.outcome._tag, p.endedAt]),
        [
          ["Failed", 0],
          ["Failed", 0],
          ["Succeeded", 1000]
        ]
      )
    })
  )

  it.effect("only the named image fails", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      yield* fake.fail("nginx:1.25", { kind: "ImageNotFound", times: "always" })
      assert.isTrue(Result.isSuccess(yield* Effect.result(fake.runtime.pullImage(pull("nginx:1.26")))))
      assert.isTrue(Result.isFailure(yield* Effect.result(fake.runtime.pullImage(pull("docker.io/library/nginx:1.25")))))
    })
  )

  it.effect("always fails until cleared", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      yield* fake.fail("nginx:1.25", { kind: "Unauthorized", times: "always", message: "401 from registry" })
      for (let i = 0; i < 5; i++) {
        const error = yield* Effect.flip(fake.runtime.pullImage(pull("nginx:1.25")))
        assert.deepStrictEqual(error._tag === "Unauthorized" ? error.message : undefined, "401 from registry")
      }
      yield* fake.clearFailures("nginx:1.25")
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:1.25")), (yield* fake.images)[0]?.id)
    })
  )

  it.effect("a failure can come later, and DeadlineExceeded comes at the timeout", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      yield* fake.fail("a:1", { kind: "RuntimeFailure", after: "3 seconds" })
      yield* fake.fail("b:1", { kind: "DeadlineExceeded" })
      yield* fake.fail("c:1", { kind: "Unauthorized", after: "1 minute" })
      const a = yield* startPull(fake.runtime, pull("a:1"))
      const b = yield* startPull(fake.runtime, pull("b:1", { timeout: Duration.seconds(10) }))
      const c = yield* startPull(fake.runtime, pull("c:1", { timeout: Duration.seconds(20) }))
      yield* TestClock.adjust("1 minute")
      const tags = yield* Effect.forEach([a, b, c], (fiber) =>
        Effect.map(Fiber.join(fiber), (result) => (Result.isFailure(result) ? result.failure._tag : "ok"))
      )
      assert.deepStrictEqual(tags, ["RuntimeFailure", "DeadlineExceeded", "DeadlineExceeded"])
      assert.deepStrictEqual(
        (yield* fake.pulls).map((p) => p.endedAt),
        [3000, 10000, 20000]
      )
    })
  )

  it.effect("unknown images are not found when the registry is strict", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ unknownImages: "notFound", registry: [{ reference: "known:1", id: idA }] })
      const error = yield* Effect.flip(fake.runtime.pullImage(pull("unknown:1")))
      assert.strictEqual(error._tag, "ImageNotFound")
      const fiber = yield* startPull(fake.runtime, pull("known:1"))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Result.succeed(idA))
    })
  )

  it.effect("an unparsable reference is InvalidReference", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime()
      assert.strictEqual((yield* Effect.flip(fake.runtime.pullImage(pull("Nginx:1"))))._tag, "InvalidReference")
    })
  )

  it.effect("an unavailable runtime fails every call", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime(nginxOnNode)
      yield* fake.setAvailable(false)
      const errors = [
        yield* Effect.flip(fake.runtime.version),
        yield* Effect.flip(fake.runtime.pullImage(pull("nginx:1.25"))),
        yield* Effect.flip(fake.runtime.imageStatus("nginx:1.25")),
        yield* Effect.flip(fake.runtime.listImages),
        yield* Effect.flip(fake.runtime.removeImage("nginx:1.25"))
      ]
      assert.deepStrictEqual(
        errors.map((e) => e._tag),
        Array(5).fill("RuntimeUnavailable")
      )
      yield* fake.setAvailable(true)
      assert.strictEqual((yield* fake.runtime.version).runtimeName, "simulated")
      assert.isTrue(yield* fake.hasImage("nginx:1.25"))
    })
  )
})

describe("SimulatedRuntime: credentials and records", () => {
  it.effect("records auth presence, sandbox config and times, never the secret", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "1 second" })
      const sandboxConfig = { labels: { app: "preheat" }, annotations: { "a/b": "c" } }
      const auth = registryCredential({ username: "alice", password: "hunter2-SECRET" })
      const one = yield* startPull(fake.runtime, pull("quay.io/a:1", { auth, sandboxConfig }))
      yield* TestClock.adjust("500 millis")
      const two = yield* startPull(fake.runtime, pull("quay.io/b:1"))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(one)
      yield* Fiber.join(two)
      const records = yield* fake.pulls
      assert.deepStrictEqual(
        records.map((r) => [r.image, r.authenticated, r.startedAt, r.endedAt]),
        [
          ["quay.io/a:1", true, 0, 1000],
          ["quay.io/b:1", false, 500, 1500]
        ]
      )
      assert.deepStrictEqual(records[0]?.sandboxConfig, sandboxConfig)
      assert.isUndefined(records[1]?.sandboxConfig)
      assert.isTrue(Duration.equals(records[0]?.timeout ?? Duration.zero, Duration.minutes(5)))
      assert.notInclude(JSON.stringify(records), "hunter2")
      assert.notInclude(JSON.stringify(records), "alice")
    })
  )

  it.effect("records other calls with their time", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime(nginxOnNode)
      yield* fake.runtime.version
      yield* TestClock.adjust("1 second")
      yield* fake.runtime.imageStatus("nginx:1.25")
      yield* fake.runtime.listImages
      yield* fake.runtime.removeImage("nginx:1.25")
      assert.deepStrictEqual(yield* fake.calls, [
        { method: "version", at: 0 },
        { method: "imageStatus", image: "nginx:1.25", at: 1000 },
        { method: "listImages", at: 1000 },
        { method: "removeImage", image: "nginx:1.25", at: 1000 }
      ])
    })
  )

  it.effect("requireAuth: the registry refuses other credentials with Unauthorized", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      yield* fake.requireAuth("registry.example.com/private/app", (auth) => auth?.username === "good")
      const attempt = (username?: string) =>
        Effect.result(
          fake.runtime.pullImage(
            pull("registry.example.com/private/app:2", {
              ...(username === undefined ? {} : { auth: registryCredential({ username, password: "pw" }) })
            })
          )
        )
      const results = [yield* attempt(), yield* attempt("bad"), yield* attempt("good")]
      assert.deepStrictEqual(
        results.map((r) => (Result.isFailure(r) ? r.failure._tag : "ok")),
        ["Unauthorized", "Unauthorized", "ok"]
      )
      // Other repositories of the registry stay open.
      assert.isTrue(Result.isSuccess(yield* Effect.result(fake.runtime.pullImage(pull("registry.example.com/public:1")))))
    })
  )

  it.effect("refusesAnonymous: the registry answers 401 to a pull without credentials, and serves any credentials", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0, refusesAnonymous: (ref) => ref.domain.startsWith("private.") })
      const attempt = (image: string, username?: string) =>
        Effect.map(
          Effect.result(
            fake.runtime.pullImage(pull(image, username === undefined ? {} : { auth: registryCredential({ username, password: "pw" }) }))
          ),
          (r) => (Result.isFailure(r) ? r.failure._tag : "ok")
        )
      assert.deepStrictEqual(
        [
          yield* attempt("private.example/app:1"),
          yield* attempt("private.example/app:1", "anyone"),
          yield* attempt("public.example/app:1")
        ],
        ["Unauthorized", "ok", "ok"]
      )
    })
  )
})

describe("SimulatedRuntime: images change", () => {
  it.effect("a moved tag pulls the new id; the old image keeps its digest", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0, registry: [{ reference: "nginx:1.25", id: idA, digest: digestA }] })
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:1.25")), idA)

      yield* fake.push({ reference: "docker.io/library/nginx:1.25", id: idB })
      // The node does not change by itself.
      assert.strictEqual(Option.getOrThrow(yield* fake.runtime.imageStatus("nginx:1.25")).id, idA)

      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:1.25")), idB)
      assert.strictEqual(Option.getOrThrow(yield* fake.runtime.imageStatus("nginx:1.25")).id, idB)
      const old = Option.getOrThrow(yield* fake.runtime.imageStatus(idA))
      assert.deepStrictEqual(old.repoTags, [])
      assert.deepStrictEqual(old.repoDigests, [`docker.io/library/nginx@${digestA}`])
      // The old content is still pullable by digest.
      assert.strictEqual(yield* fake.runtime.pullImage(pull(`nginx@${digestA}`)), idA)
    })
  )

  it.effect("tagRevision: a made-up tag is made up again (new id and digest) when its revision changes, and back", () =>
    Effect.gen(function* () {
      let revision: string | undefined
      const fake = yield* makeSimulatedRuntime({ latency: 0, tagRevision: () => revision })
      const digestOf = (id: string) =>
        Effect.map(fake.runtime.imageStatus(id), (info) => Option.getOrThrow(info).repoDigests.find((d) => d.includes("/nginx@")))
      const first = yield* fake.runtime.pullImage(pull("nginx:latest"))
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:latest")), first)
      revision = "push-1"
      const moved = yield* fake.runtime.pullImage(pull("nginx:latest"))
      assert.notStrictEqual(moved, first)
      assert.notStrictEqual(yield* digestOf(moved), yield* digestOf(first))
      // Without a revision the tag names its first image again.
      revision = undefined
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:latest")), first)
    })
  )

  it.effect("an image present at start is served as is, and Always-pulls see a push", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ ...nginxOnNode, latency: 0 })
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:1.25")), idA)
      yield* fake.push({ reference: "nginx:1.25", id: idB })
      assert.strictEqual(yield* fake.runtime.pullImage(pull("nginx:1.25")), idB)
      assert.lengthOf(yield* fake.runtime.listImages, 2)
    })
  )

  it.effect("a pull by digest is found by digest, not by tag", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      const id = yield* fake.runtime.pullImage(pull(`quay.io/org/app@${digestA}`))
      assert.isTrue(yield* fake.hasImage(`quay.io/org/app@${digestA}`))
      assert.isFalse(yield* fake.hasImage("quay.io/org/app:latest"))
      assert.strictEqual(yield* fake.runtime.pullImage(pull(`quay.io/org/app@${digestA}`)), id)
    })
  )

  it.effect("made-up images are stable: the same reference gives the same id", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: 0 })
      const first = yield* fake.runtime.pullImage(pull("nginx:1.25"))
      const second = yield* fake.runtime.pullImage(pull("docker.io/library/nginx:1.25"))
      const other = yield* fake.runtime.pullImage(pull("nginx:1.26"))
      assert.strictEqual(first, second)
      assert.notStrictEqual(first, other)
      assert.match(first, /^sha256:[a-f0-9]{64}$/)
    })
  )

  it.effect("RemoveImage removes the whole image, and succeeds when absent", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime(nginxOnNode)
      yield* fake.runtime.removeImage("docker.io/nginx:1.25")
      assert.isFalse(yield* fake.hasImage(`nginx@${digestA}`))
      assert.lengthOf(yield* fake.runtime.listImages, 0)
      yield* fake.runtime.removeImage("nginx:1.25")
    })
  )
})

describe("SimulatedRuntime: progress", () => {
  /** A request that collects its progress reports, as [bytesDone, bytesTotal, percent]. */
  const watched = (image: string, extra: Partial<PullRequest> = {}) => {
    const seen: Array<readonly [number, number, number]> = []
    const onProgress = (p: PullProgress) => Effect.sync(() => void seen.push([p.bytesDone, p.bytesTotal, p.percent]))
    return { request: pull(image, { ...extra, onProgress }), seen }
  }

  it.effect("reports unknown, then the size, steps through the latency, and 100 on success only", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds", registry: [{ reference: "app:1", id: idA, size: 1000 }] })
      const { request, seen } = watched("app:1")
      const fiber = yield* startPull(fake.runtime, request)
      assert.deepStrictEqual(seen, [
        [0, 0, 0],
        [0, 1000, 0]
      ])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(seen.at(-1), [100, 1000, 10])
      yield* TestClock.adjust("8999 millis")
      assert.deepStrictEqual(seen.at(-1), [900, 1000, 90])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen.at(-1), [1000, 1000, 100])
      assert.lengthOf(seen, 12)
      const percents = seen.map(([, , percent]) => percent)
      assert.deepStrictEqual(
        percents,
        [...percents].sort((a, b) => a - b)
      )
    })
  )

  it.effect("a deadline stops the reports short of 100", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds" })
      const { request, seen } = watched("app:1", { timeout: Duration.millis(4500) })
      const fiber = yield* startPull(fake.runtime, request)
      yield* TestClock.adjust("1 minute")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "DeadlineExceeded")
      assert.deepStrictEqual(
        seen.map(([, , percent]) => percent),
        [0, 0, 10, 20, 30, 40]
      )
      assert.strictEqual((yield* fake.pulls)[0]?.endedAt, 4500)
    })
  )

  it.effect("progressSteps 0 acts like a runtime without progress", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "3 seconds", progressSteps: 0 })
      const { request, seen } = watched("app:1")
      const fiber = yield* startPull(fake.runtime, request)
      yield* TestClock.adjust("3 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen, [
        [0, 0, 0],
        [0, 0, 100]
      ])
    })
  )

  it.effect("a hanging pull reports only its start", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime()
      yield* fake.hang("app:1")
      const { request, seen } = watched("app:1", { timeout: Duration.seconds(30) })
      const fiber = yield* startPull(fake.runtime, request)
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(seen, [[0, 0, 0]])
    })
  )

  it.effect("a stalled pull awaits bytes from its size on, stops at its share, waits for its deadline, and the next pull is served", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds", registry: [{ reference: "app:1", id: idA, size: 1000 }] })
      yield* fake.stall("app:1", { atPercent: 30 })
      const seen: Array<readonly [number, number, number]> = []
      const awaiting: Array<boolean | undefined> = []
      const onProgress = (p: PullProgress) =>
        Effect.sync(() => {
          seen.push([p.bytesDone, p.bytesTotal, p.percent])
          awaiting.push(p.awaitingBytes)
        })
      const request = pull("app:1", { timeout: Duration.minutes(1), onProgress })
      const fiber = yield* startPull(fake.runtime, request)
      yield* TestClock.adjust("59 seconds")
      assert.deepStrictEqual(seen, [
        [0, 0, 0],
        [0, 1000, 0],
        [100, 1000, 10],
        [200, 1000, 20],
        [300, 1000, 30]
      ])
      assert.deepStrictEqual(awaiting, [undefined, true, true, true, true])
      assert.strictEqual((yield* fake.pulls)[0]?.outcome._tag, "InFlight")
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "DeadlineExceeded")
      const next = watched("app:1")
      const second = yield* startPull(fake.runtime, next.request)
      yield* TestClock.adjust("10 seconds")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(second)))
      assert.deepStrictEqual(next.seen.at(-1), [1000, 1000, 100])
    })
  )

  it.effect("the registry's stalls (preheat dev's stalled.* hosts) stall that many pulls of a reference halfway", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds", stalls: (ref) => (ref.domain === "stalled.example" ? 1 : 0) })
      const first = watched("stalled.example/app:1", { timeout: Duration.seconds(30) })
      const fiber = yield* startPull(fake.runtime, first.request)
      yield* TestClock.adjust("30 seconds")
      assert.isTrue(Result.isFailure(yield* Fiber.join(fiber)))
      assert.strictEqual(first.seen.at(-1)?.[2], 50)
      const second = yield* startPull(fake.runtime, pull("stalled.example/app:1"))
      yield* TestClock.adjust("10 seconds")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(second)))
    })
  )
})

describe("SimulatedRuntime: interruption", () => {
  it.effect("an interrupted pull is recorded as cancelled and leaves the image absent", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds" })
      const fiber = yield* startPull(fake.runtime, pull("nginx:1.25"))
      yield* TestClock.adjust("3 seconds")
      yield* Fiber.interrupt(fiber)
      const [record] = yield* fake.pulls
      assert.deepStrictEqual(record?.outcome, { _tag: "Cancelled" })
      assert.strictEqual(record?.endedAt, 3000)
      yield* TestClock.adjust("1 minute")
      assert.isFalse(yield* fake.hasImage("nginx:1.25"))
      assert.lengthOf(yield* fake.images, 0)
    })
  )

  it.effect("a timeout around the pull interrupts it", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: "10 seconds" })
      const fiber = yield* Effect.forkChild(Effect.timeoutOption(fake.runtime.pullImage(pull("nginx:1.25")), "2 seconds"))
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.join(fiber)))
      assert.strictEqual((yield* fake.pulls)[0]?.outcome._tag, "Cancelled")
    })
  )
})

describe("SimulatedRuntime.layer", () => {
  it.effect("provides CriRuntime and the SimulatedRuntime handle over one state", () =>
    Effect.gen(function* () {
      const cri = yield* CriRuntime
      const fake = yield* SimulatedRuntime
      const fiber = yield* startPull(cri, pull("nginx:1.26"))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.isTrue(yield* fake.hasImage("nginx:1.26"))
      assert.isTrue(yield* fake.hasImage("nginx:1.25"))
      assert.lengthOf(yield* fake.pulls, 1)
    }).pipe(Effect.provide(SimulatedRuntime.layer(nginxOnNode)))
  )
})

describe("SimulatedRuntime: what it records", () => {
  it.effect("keeps the newest calls and pulls within its limits, and still ends a pull whose record was dropped", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ latency: Duration.seconds(1), recordLimits: { count: 2, bytes: 1_000_000 } })
      yield* fake.setLatency("registry.example.com/slow:v1", Duration.seconds(10))
      const slow = yield* startPull(fake.runtime, pull("registry.example.com/slow:v1"))
      for (let i = 0; i < 3; i++) {
        const fast = yield* startPull(fake.runtime, pull(`registry.example.com/app-${i}:v1`))
        yield* TestClock.adjust("1 second")
        assert.isTrue(Result.isSuccess(yield* Fiber.join(fast)))
      }
      assert.deepStrictEqual(
        (yield* fake.pulls).map((p) => [p.image, p.outcome._tag]),
        [
          ["registry.example.com/app-1:v1", "Succeeded"],
          ["registry.example.com/app-2:v1", "Succeeded"]
        ]
      )
      assert.deepStrictEqual(
        (yield* fake.calls).map((c) => c.image),
        ["registry.example.com/app-1:v1", "registry.example.com/app-2:v1"]
      )
      yield* TestClock.adjust("10 seconds")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(slow)))
      assert.isTrue(yield* fake.hasImage("registry.example.com/slow:v1"))
      assert.strictEqual((yield* fake.pulls).length, 2)
    })
  )

  it.effect("keeps no more than about its bytes of records", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ recordLimits: { count: 10_000, bytes: 20_000 } })
      for (let i = 0; i < 1000; i++) yield* fake.runtime.imageStatus(`registry.example.com/${"long-name-".repeat(10)}${i}:v1`)
      const calls = yield* fake.calls
      // About 390 bytes a record (120 + 2 bytes a character): 51 fit in 20,000.
      assert.isAtMost(calls.length, 60)
      assert.isAtLeast(calls.length, 40)
      assert.strictEqual(calls.at(-1)?.image, `registry.example.com/${"long-name-".repeat(10)}999:v1`)
    })
  )
})

describe("SimulatedRuntime: the disk images fill", () => {
  const mountpoint = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"

  it.effect("ImageFsInfo gives the images' bytes on the mountpoint; statfs of it the disk's size and what is left", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ ...nginxOnNode, disk: { capacity: 10_000, otherUsed: 2000 } })
      assert.deepStrictEqual(yield* fake.runtime.imageFsInfo, [{ mountpoint, usedBytes: 1000, inodesUsed: 1 }])
      assert.deepStrictEqual(yield* fake.filesystemStats.statfs(mountpoint), { totalBytes: 10_000, freeBytes: 7000 })
      yield* fake.push({ reference: "redis:7", id: idB, size: 3000 })
      const pulled = yield* startPull(fake.runtime, pull("redis:7"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(pulled)))
      assert.deepStrictEqual(yield* fake.runtime.imageFsInfo, [{ mountpoint, usedBytes: 4000, inodesUsed: 2 }])
      assert.deepStrictEqual(yield* fake.filesystemStats.statfs(mountpoint), { totalBytes: 10_000, freeBytes: 4000 })
      yield* fake.runtime.removeImage("nginx:1.25")
      assert.deepStrictEqual(yield* fake.filesystemStats.statfs(mountpoint), { totalBytes: 10_000, freeBytes: 5000 })
      assert.isTrue((yield* fake.calls).some((c) => c.method === "imageFsInfo"))
    })
  )

  it.effect("an image that no longer fits fails as containerd's pull does: no space left on device", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime({ disk: { capacity: 5000 } })
      yield* fake.push({ reference: "redis:7", id: idB, size: 6000 })
      const fiber = yield* startPull(fake.runtime, pull("redis:7"))
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure._tag, "RuntimeFailure")
        assert.include(result.failure._tag === "RuntimeFailure" ? result.failure.message : "", "no space left on device")
      }
      assert.isFalse(yield* fake.hasImage("redis:7"))
      // A bigger disk: the same pull fits.
      yield* fake.setDisk({ capacity: 10_000 })
      const again = yield* startPull(fake.runtime, pull("redis:7"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Result.isSuccess(yield* Fiber.join(again)))
    })
  )

  it.effect("statfs of another path fails, as of a path not mounted in the daemon's container", () =>
    Effect.gen(function* () {
      const fake = yield* makeSimulatedRuntime()
      const failure = yield* Effect.flip(fake.filesystemStats.statfs("/elsewhere"))
      assert.strictEqual(failure._tag, "FilesystemStatsFailed")
      assert.strictEqual(failure.path, "/elsewhere")
      // The default disk: 1 TiB.
      assert.deepStrictEqual(yield* fake.filesystemStats.statfs(mountpoint), { totalBytes: 2 ** 40, freeBytes: 2 ** 40 })
    })
  )
})
