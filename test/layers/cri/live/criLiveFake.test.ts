import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Exit, ManagedRuntime, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CriLive from "../../../../layers/cri/live/criLive.ts"
import { CriRuntime, type PullProgress } from "../../../../src/cri/CriRuntime.ts"
import type { FilesystemStats } from "../../../../src/cri/FilesystemStats.ts"
import { ImageLabels } from "../../../../src/cri/ImageLabels.ts"
import { makeDiskCheck } from "../../../../src/daemon/diskCheck.ts"
import { parseMinFreeDisk } from "../../../../src/daemon/minFreeDisk.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { loadServiceConstructors } from "../../../../layers/cri/live/grpcPackages.ts"

/**
 * The live layer against a CRI server that, like CRI-O or cri-dockerd, has no containerd lease or
 * content service: a grpc-js server on a unix socket built from the same embedded proto. Needs no
 * root and no runtime, so it runs everywhere; it covers what a real containerd cannot be made to
 * do on demand (hang, say UNKNOWN with a header in the text, vanish).
 */

const imageId = `sha256:${"f".repeat(64)}`
const leakedHeader = "Authorization: Basic c2VjcmV0LXVzZXI6c2VjcmV0LXBhc3M="

type Handler = (call: { request: { image?: { image?: string } } }, callback: grpc.sendUnaryData<object>) => void

const pullImage: Handler = (call, callback) => {
  const image = call.request.image?.image ?? ""
  if (image.includes("hang")) return
  if (image.includes("private")) {
    callback({ code: grpc.status.UNKNOWN, details: `pulling ${image}: 401 Unauthorized (sent ${leakedHeader})` })
  } else if (image.includes("missing")) {
    callback({ code: grpc.status.NOT_FOUND, details: `${image}: not found` })
  } else {
    setTimeout(() => callback(null, { image_ref: imageId }), 50)
  }
}

describe("CRI on a runtime without containerd's API (fake CRI server)", () => {
  let dir = ""
  let server: grpc.Server
  let runtime: ManagedRuntime.ManagedRuntime<CriRuntime | ImageLabels | FilesystemStats, unknown>
  const cri = <A, E>(f: (service: CriRuntime["Service"]) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.flatMap(Effect.service(CriRuntime), f))
  const failure = <A, E>(f: (service: CriRuntime["Service"]) => Effect.Effect<A, E>) => cri((s) => Effect.flip(f(s)))
  const labelsFailure = <A, E>(f: (service: ImageLabels["Service"]) => Effect.Effect<A, E>) =>
    runtime.runPromise(Effect.flatMap(Effect.service(ImageLabels), (s) => Effect.flip(f(s))))

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "preheat-fake-cri-"))
    mkdirSync(join(dir, "crio"))
    const socket = join(dir, "crio", "crio.sock")
    const constructors = loadServiceConstructors()
    server = new grpc.Server()
    server.addService(constructors.runtimeService.service, {
      Version: (_call: unknown, callback: grpc.sendUnaryData<object>) =>
        callback(null, { version: "0.1.0", runtime_name: "fake-crio", runtime_version: "1.0", runtime_api_version: "v1" })
    })
    server.addService(constructors.imageService.service, {
      PullImage: pullImage,
      ImageStatus: (_call: unknown, callback: grpc.sendUnaryData<object>) => callback(null, {}),
      ListImages: (_call: unknown, callback: grpc.sendUnaryData<object>) => callback(null, { images: [] }),
      RemoveImage: (_call: unknown, callback: grpc.sendUnaryData<object>) =>
        callback({ code: grpc.status.NOT_FOUND, details: "no such image" })
    })
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve()))
    )
    // Found by discovery: only crio/crio.sock exists under this run dir.
    runtime = ManagedRuntime.make(CriLive.layer({ hostRunDir: dir, progressInterval: Duration.millis(10) }))
  })

  afterAll(async () => {
    await runtime.dispose()
    server.forceShutdown()
    rmSync(dir, { recursive: true, force: true })
  })

  it("discovery finds crio/crio.sock", async () => {
    expect((await cri((s) => s.version)).runtimeName).toBe("fake-crio")
  })

  it("progress falls back to 0, then 100", async () => {
    const events: Array<PullProgress> = []
    const id = await cri((s) =>
      s.pullImage({ image: "example.com/app:v1", timeout: Duration.seconds(5), onProgress: (p) => Effect.sync(() => void events.push(p)) })
    )
    expect(id).toBe(imageId)
    expect(events).toEqual([
      { bytesDone: 0, bytesTotal: 0, percent: 0 },
      { bytesDone: 0, bytesTotal: 0, percent: 100 }
    ])
  })

  it("an unauthorized pull is Unauthorized, with the header the runtime echoed redacted", async () => {
    const error = await failure((s) => s.pullImage({ image: "example.com/private:v1", timeout: Duration.seconds(5) }))
    expect(error._tag).toBe("Unauthorized")
    expect(error.message).not.toContain("c2VjcmV0LXVzZXI6c2VjcmV0LXBhc3M=")
    expect(error.message).toContain("<redacted>")
  })

  it("NOT_FOUND is ImageNotFound; an absent image's status is none; removing it succeeds", async () => {
    const error = await failure((s) => s.pullImage({ image: "example.com/missing:v1", timeout: Duration.seconds(5) }))
    expect(error).toMatchObject({ _tag: "ImageNotFound", image: "example.com/missing:v1" })
    expect((await cri((s) => s.imageStatus("example.com/missing:v1")))._tag).toBe("None")
    await cri((s) => s.removeImage("example.com/missing:v1"))
  })

  it("a pull that outlives its timeout is DeadlineExceeded", async () => {
    const error = await failure((s) => s.pullImage({ image: "example.com/hang:v1", timeout: Duration.millis(100) }))
    expect(error).toEqual(expect.objectContaining({ _tag: "DeadlineExceeded", image: "example.com/hang:v1" }))
  })

  it("interrupting a pull cancels it", async () => {
    const exit = await runtime.runPromiseExit(
      Effect.flatMap(Effect.service(CriRuntime), (s) => s.pullImage({ image: "example.com/hang:v1", timeout: Duration.seconds(30) })).pipe(
        Effect.timeout(Duration.millis(100))
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
  })

  it("image labels: no containerd images service (UNIMPLEMENTED) is ImageLabelsUnsupported, for list and update", async () => {
    expect(await labelsFailure((s) => s.list)).toEqual(expect.objectContaining({ _tag: "ImageLabelsUnsupported" }))
    expect(await labelsFailure((s) => s.setLabels("example.com/app:v1", { "io.cri-containerd.pinned": "pinned" }))).toEqual(
      expect.objectContaining({ _tag: "ImageLabelsUnsupported" })
    )
  })

  // Last: it stops the server.
  it("ImageFsInfo a runtime does not implement: the disk check cannot tell the free space and lets the pull go", async () => {
    const error = await failure((s) => s.imageFsInfo)
    expect(error).toMatchObject({ _tag: "RuntimeFailure" })
    expect(error._tag === "RuntimeFailure" ? error.message : "").toMatch(/^ImageFsInfo: /)
    const { verdict, unknown } = await runtime.runPromise(
      Effect.gen(function* () {
        const disk = yield* makeDiskCheck(Result.getOrThrow(parseMinFreeDisk("100%")))
        const verdict = yield* disk.check
        return { verdict, unknown: yield* (yield* Metrics).read("preheat_image_fs_unknown") }
      }).pipe(Effect.provide(Metrics.layerTest))
    )
    expect(verdict).toBeUndefined()
    expect(unknown).toBe(1)
  })

  it("when the runtime goes away, calls are RuntimeUnavailable", async () => {
    server.forceShutdown()
    rmSync(join(dir, "crio", "crio.sock"), { force: true })
    // The first call may meet the closing connection (CANCELLED), the next finds no socket (UNAVAILABLE).
    expect((await failure((s) => s.version))._tag).toBe("RuntimeUnavailable")
    expect((await failure((s) => s.version))._tag).toBe("RuntimeUnavailable")
    expect((await failure((s) => s.pullImage({ image: "example.com/app:v1", timeout: Duration.seconds(5) })))._tag).toBe(
      "RuntimeUnavailable"
    )
    // A runtime gone is a passing failure, not "unsupported" (which would turn pinning off for good).
    expect((await labelsFailure((s) => s.list))._tag).toBe("ImageLabelsFailed")
  })
})
