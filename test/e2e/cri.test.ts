import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration, Effect, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { CriRuntime, type PullProgress, type PullRequest } from "../../src/cri/CriRuntime.ts"
import { candidateSockets } from "../../layers/cri/live/socketDiscovery.ts"
import { buildImage, hostArchitecture, publishImage, pushImage, pushIndex, type Registry } from "../support/imageBuilder.ts"
import { describeE2e } from "./describeE2e.ts"

const MB = 1_000_000
/** Fresh names and layer bytes each run, so a runtime kept between runs never has them yet. */
const run = randomBytes(4).toString("hex")
const pullTimeout = Duration.seconds(60)

const collect = () => {
  const events: Array<PullProgress> = []
  return { events, onProgress: (p: PullProgress) => Effect.sync(() => void events.push(p)) }
}

const expectMonotone = (events: ReadonlyArray<PullProgress>) => {
  for (let i = 1; i < events.length; i++) {
    const [before, after] = [events[i - 1]!, events[i]!]
    expect(after.percent).toBeGreaterThanOrEqual(before.percent)
    expect(after.bytesDone).toBeGreaterThanOrEqual(before.bytesDone)
  }
}

describeE2e("CRI against a real containerd", (e) => {
  const plain: Registry = { host: e.registry }
  const protectedRegistry: Registry = { host: e.authRegistry, auth: { username: e.user, password: e.password } }
  let runtime: ManagedRuntime.ManagedRuntime<CriRuntime, unknown>

  const cri = <A, E>(f: (service: CriRuntime["Service"]) => Effect.Effect<A, E>): Promise<A> =>
    runtime.runPromise(Effect.flatMap(Effect.service(CriRuntime), f))
  const failure = <A, E>(f: (service: CriRuntime["Service"]) => Effect.Effect<A, E>): Promise<E> =>
    cri((service) => Effect.flip(f(service)))
  const pull = (request: Omit<PullRequest, "timeout"> & { readonly timeout?: Duration.Duration }) => (service: CriRuntime["Service"]) =>
    service.pullImage({ timeout: pullTimeout, ...request })

  beforeAll(() => {
    runtime = ManagedRuntime.make(CriLive.layer({ socket: e.socket, progressInterval: Duration.millis(40) }))
  })
  afterAll(async () => {
    // Leave a runtime kept between runs (PREHEAT_E2E_KEEP=1) without this run's images; the
    // registries keep theirs until `runtime.sh stop` removes the whole dir.
    await cri((s) =>
      Effect.flatMap(s.listImages, (images) =>
        Effect.forEach(
          images.filter((i) => [...i.repoTags, ...i.repoDigests].some((n) => n.includes(`-${run}`))),
          (i) => s.removeImage(i.id)
        )
      )
    ).finally(() => runtime.dispose())
  })

  it("Version names containerd and CRI v1", async () => {
    const version = await cri((s) => s.version)
    expect(version.runtimeName).toBe("containerd")
    expect(version.runtimeApiVersion).toBe("v1")
    expect(version.runtimeVersion).not.toBe("")
  })

  it("pulls by tag; ImageStatus and ListImages show the image; RemoveImage removes it", async () => {
    const image = await publishImage(plain, `e2e/plain-${run}`, [{ size: 64_000, seed: `${run}-plain` }], ["v1"])
    const ref = image.reference()
    expect(await cri((s) => s.imageStatus(ref))).toEqual(Option.none())

    const id = await cri(pull({ image: ref }))
    expect(id).toBe(image.imageId)

    const status = await cri((s) => s.imageStatus(ref))
    expect(Option.isSome(status)).toBe(true)
    const info = Option.getOrThrow(status)
    expect(info.id).toBe(image.imageId)
    expect(info.repoTags).toContain(ref)
    expect(info.repoDigests).toContain(image.digestReference)
    expect(info.size).toBeGreaterThan(64_000)

    const listed = await cri((s) => s.listImages)
    expect(listed.map((i) => i.id)).toContain(image.imageId)

    await cri((s) => s.removeImage(ref))
    expect(await cri((s) => s.imageStatus(ref))).toEqual(Option.none())
    expect((await cri((s) => s.listImages)).map((i) => i.id)).not.toContain(image.imageId)
    // Removing what is not there is not an error.
    await cri((s) => s.removeImage(ref))
  })

  it("pulls a digest reference name@sha256:...", async () => {
    const image = await publishImage(plain, `e2e/digest-${run}`, [{ size: 32_000, seed: `${run}-digest` }], ["v1"])
    const id = await cri(pull({ image: image.digestReference }))
    expect(id).toBe(image.imageId)
    const info = Option.getOrThrow(await cri((s) => s.imageStatus(image.digestReference)))
    expect(info.repoDigests).toContain(image.digestReference)
  })

  it("follows a moved tag: pulling latest again gives the new image", async () => {
    const repository = `e2e/moving-${run}`
    const first = await publishImage(plain, repository, [{ size: 16_000, seed: `${run}-moving-1` }], ["v1", "latest"])
    expect(await cri(pull({ image: first.reference("latest") }))).toBe(first.imageId)
    const second = await pushImage(plain, repository, buildImage([{ size: 16_000, seed: `${run}-moving-2` }]), ["v2", "latest"])
    expect(second.imageId).not.toBe(first.imageId)
    expect(await cri(pull({ image: first.reference("latest") }))).toBe(second.imageId)
    // The first image is still there under its digest; latest names the second.
    expect(Option.getOrThrow(await cri((s) => s.imageStatus(first.digestReference))).id).toBe(first.imageId)
    expect(Option.getOrThrow(await cri((s) => s.imageStatus(first.reference("latest")))).id).toBe(second.imageId)
  })

  describe("htpasswd registry", () => {
    let ref = ""
    let imageId = ""
    beforeAll(async () => {
      const image = await publishImage(protectedRegistry, `e2e/private-${run}`, [{ size: 48_000, seed: `${run}-private` }], ["v1"])
      ref = image.reference()
      imageId = image.imageId
    })

    it("pulls with the right username and password", async () => {
      expect(await cri(pull({ image: ref, auth: { username: e.user, password: e.password } }))).toBe(imageId)
      await cri((s) => s.removeImage(ref))
    })

    it("pulls with `auth` (base64 user:password)", async () => {
      const auth = Buffer.from(`${e.user}:${e.password}`).toString("base64")
      expect(await cri(pull({ image: ref, auth: { auth } }))).toBe(imageId)
      await cri((s) => s.removeImage(ref))
    })

    it("a wrong password is Unauthorized, and the message does not contain it", async () => {
      const password = `wrong-${randomBytes(6).toString("hex")}`
      const error = await failure(pull({ image: ref, auth: { username: e.user, password } }))
      expect(error._tag).toBe("Unauthorized")
      if (error._tag !== "Unauthorized") return
      expect(error.image).toBe(ref)
      expect(error.message).toMatch(/unauthorized/i)
      for (const secret of [password, Buffer.from(`${e.user}:${password}`).toString("base64"), e.password]) {
        expect(error.message).not.toContain(secret)
        expect(JSON.stringify(error)).not.toContain(secret)
      }
    })

    it("no credentials is Unauthorized", async () => {
      const error = await failure(pull({ image: ref }))
      expect(error._tag).toBe("Unauthorized")
    })
  })

  it("a missing tag is ImageNotFound naming the image", async () => {
    const ref = `${e.registry}/e2e/plain-${run}:no-such-tag`
    const error = await failure(pull({ image: ref }))
    expect(error._tag).toBe("ImageNotFound")
    if (error._tag !== "ImageNotFound") return
    expect(error.image).toBe(ref)
    expect(error.message).toContain(ref)
  })

  it("a malformed reference is InvalidReference", async () => {
    const ref = `${e.registry}/e2e/UPPER-case-${run}:v1`
    const error = await failure(pull({ image: ref }))
    expect(error._tag).toBe("InvalidReference")
  })

  it("a per-call timeout on a large image is DeadlineExceeded, and the pull is cancelled", async () => {
    const image = await publishImage(plain, `e2e/slow-${run}`, [{ size: 150 * MB, seed: `${run}-slow` }], ["v1"])
    const started = performance.now()
    const error = await failure(pull({ image: image.reference(), timeout: Duration.millis(150) }))
    expect(error._tag).toBe("DeadlineExceeded")
    if (error._tag === "DeadlineExceeded") expect(error.image).toBe(image.reference())
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(await cri((s) => s.imageStatus(image.reference()))).toEqual(Option.none())
  })

  it("pulls a 50 MB image (timed)", async () => {
    const image = await publishImage(plain, `e2e/fifty-${run}`, [{ size: 50 * MB, seed: `${run}-fifty` }], ["v1"])
    const started = performance.now()
    expect(await cri(pull({ image: image.reference() }))).toBe(image.imageId)
    const ms = performance.now() - started
    process.stdout.write(`[e2e] 50 MB pull took ${ms.toFixed(0)} ms (snapshotter ${e.snapshotter})\n`)
  })

  it("reports byte progress on a 200 MB image: 0, then strictly between, never decreasing, then 100", async () => {
    const image = await publishImage(
      plain,
      `e2e/big-${run}`,
      [
        { size: 100 * MB, seed: `${run}-big-1` },
        { size: 100 * MB, seed: `${run}-big-2` },
        { size: 10_000, seed: `${run}-big-3` }
      ],
      ["v1"]
    )
    const { events, onProgress } = collect()
    expect(await cri(pull({ image: image.reference(), onProgress }))).toBe(image.imageId)

    // Under preheat's lease, the pull awaits the registry from its start (it resolves the tag first).
    expect(events[0]).toEqual({ bytesDone: 0, bytesTotal: 0, percent: 0, awaitingBytes: true })
    expect(events.some((p) => p.percent > 0 && p.percent < 100)).toBe(true)
    expectMonotone(events)
    expect(events.at(-1)).toEqual({ bytesDone: image.blobBytes, bytesTotal: image.blobBytes, percent: 100, awaitingBytes: false })
    expect(events.filter((p) => p.percent === 100)).toHaveLength(1)
    // The stall clock's signal: bytes awaited while they came.
    expect(events.some((p) => p.awaitingBytes === true && p.percent > 0 && p.percent < 100)).toBe(true)
    for (const p of events) if (p.bytesTotal > 0) expect(p.bytesTotal).toBe(image.blobBytes)
  })

  it("two concurrent pulls of different images each get their own progress", async () => {
    const [a, b] = await Promise.all([
      publishImage(
        plain,
        `e2e/pair-a-${run}`,
        [
          { size: 60 * MB, seed: `${run}-a-1` },
          { size: 40 * MB, seed: `${run}-a-2` }
        ],
        ["v1"]
      ),
      publishImage(
        plain,
        `e2e/pair-b-${run}`,
        [
          { size: 70 * MB, seed: `${run}-b-1` },
          { size: 5 * MB, seed: `${run}-b-2` }
        ],
        ["v1"]
      )
    ])
    const progressA = collect()
    const progressB = collect()
    const [idA, idB] = await cri((s) =>
      Effect.all(
        [
          s.pullImage({ image: a.reference(), timeout: pullTimeout, onProgress: progressA.onProgress }),
          s.pullImage({ image: b.reference(), timeout: pullTimeout, onProgress: progressB.onProgress })
        ],
        { concurrency: 2 }
      )
    )
    expect([idA, idB]).toEqual([a.imageId, b.imageId])
    for (const [image, { events }] of [
      [a, progressA],
      [b, progressB]
    ] as const) {
      expectMonotone(events)
      // Each total is its own image's bytes, not the other's and not the sum.
      const totals = new Set(events.map((p) => p.bytesTotal).filter((t) => t > 0))
      expect([...totals]).toEqual([image.blobBytes])
      expect(events.some((p) => p.percent > 0 && p.percent < 100)).toBe(true)
      expect(events.at(-1)).toEqual({ bytesDone: image.blobBytes, bytesTotal: image.blobBytes, percent: 100, awaitingBytes: false })
    }
  })

  it("pulls a multi-platform index by digest; progress counts only this platform's image", async () => {
    const repository = `e2e/multi-${run}`
    const mine = buildImage([{ size: 30 * MB, seed: `${run}-multi-mine` }])
    const other = buildImage([{ size: 20 * MB, seed: `${run}-multi-other` }], { architecture: "s390x", os: "linux" })
    const index = await pushIndex(
      plain,
      repository,
      [
        { image: other, architecture: "s390x", os: "linux" },
        { image: mine, architecture: hostArchitecture(), os: "linux" }
      ],
      ["v1"]
    )
    const mineBytes = mine.config.size + mine.layers.reduce((sum, layer) => sum + layer.size, 0)
    const { events, onProgress } = collect()
    expect(await cri(pull({ image: index.digestReference, onProgress }))).toBe(mine.config.digest)
    expectMonotone(events)
    expect(events.at(-1)).toEqual({ bytesDone: mineBytes, bytesTotal: mineBytes, percent: 100, awaitingBytes: false })
  })

  it("pulling an image already present with progress goes from 0 to 100", async () => {
    const image = await publishImage(plain, `e2e/again-${run}`, [{ size: 2 * MB, seed: `${run}-again` }], ["v1"])
    await cri(pull({ image: image.reference() }))
    const { events, onProgress } = collect()
    expect(await cri(pull({ image: image.reference(), onProgress }))).toBe(image.imageId)
    expect(events[0]?.percent).toBe(0)
    expect(events.at(-1)?.percent).toBe(100)
    expectMonotone(events)
  })

  describe("socket", () => {
    let dir = ""
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "preheat-sockets-"))
    })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    const withLayer = <A, E>(options: CriLive.CriLiveOptions, f: (s: CriRuntime["Service"]) => Effect.Effect<A, E>) =>
      Effect.runPromise(Effect.flip(Effect.flatMap(Effect.service(CriRuntime), f).pipe(Effect.provide(CriLive.layer(options)))))

    it("a socket that is gone is RuntimeUnavailable", async () => {
      const options = { socket: join(dir, "gone.sock") }
      expect((await withLayer(options, (s) => s.version))._tag).toBe("RuntimeUnavailable")
      const error = await withLayer(options, (s) => s.pullImage({ image: `${e.registry}/e2e/x:v1`, timeout: pullTimeout }))
      expect(error._tag).toBe("RuntimeUnavailable")
    })

    it("discovery names every path it tried when none answers", async () => {
      const empty = join(dir, "empty")
      mkdirSync(empty)
      writeFileSync(join(empty, "containerd.sock"), "not a socket")
      const error = await withLayer({ hostRunDir: empty }, (s) => s.version)
      expect(error._tag).toBe("RuntimeUnavailable")
      for (const path of candidateSockets(empty)) expect(error.message).toContain(path)
    })

    it("discovery finds containerd/containerd.sock under the host run dir", async () => {
      const host = join(dir, "host")
      mkdirSync(join(host, "containerd"), { recursive: true })
      symlinkSync(e.socket, join(host, "containerd", "containerd.sock"))
      const version = await Effect.runPromise(
        Effect.flatMap(Effect.service(CriRuntime), (s) => s.version).pipe(Effect.provide(CriLive.layer({ hostRunDir: host })))
      )
      expect(version.runtimeName).toBe("containerd")
    })
  })
})
