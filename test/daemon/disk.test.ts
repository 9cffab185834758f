import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { simulatedImageFsMountpoint } from "../../harness/layers/simulatedRuntime/config.ts"
import { FilesystemStats, FilesystemStatsFailed } from "../../src/cri/FilesystemStats.ts"
import { parseMinFreeDisk } from "../../src/daemon/minFreeDisk.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, createNodeImage, events, launch, setImages, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const Mi = 2 ** 20
const Gi = 2 ** 30

const minFreeDisk = (text: string) => Result.getOrThrow(parseMinFreeDisk(text))
const onDisk = { mountpoint: simulatedImageFsMountpoint }

describe("daemon: --min-free-disk", () => {
  it.effect("a disk that fills: the pull that would go below the threshold fails with InsufficientDisk and the figures", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      yield* createNodeImage({ "registry.example/a": { tags: [tag("1")] }, "registry.example/b": { tags: [tag("1")] } })
      yield* launch({ minFreeDisk: minFreeDisk("500Mi") })
      yield* advance(2000)
      expect((yield* tagStatus("registry.example/a", "1"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("registry.example/b", "1"))?.phase).toBe("Succeeded")
      // 1 GiB less two images of 300 MiB leaves 424 MiB: under 500 MiB.
      yield* setImages({
        "registry.example/a": { tags: [tag("1")] },
        "registry.example/b": { tags: [tag("1")] },
        "registry.example/c": { tags: [tag("1")] }
      })
      yield* advance(10_000, 500)
      const status = yield* tagStatus("registry.example/c", "1")
      expect(status?.phase).toBe("Failed")
      expect(status?.message).toBe(
        'failed to pull image "registry.example/c:1" after 4 attempts: insufficient disk: 424Mi free of 1Gi on the image filesystem ' +
          `${simulatedImageFsMountpoint}, below --min-free-disk 500Mi`
      )
      // Refused before pulling: the runtime never saw a pull of c.
      expect((yield* fake.pulls).map((p) => p.image)).toEqual(["registry.example/a:1", "registry.example/b:1"])
      const refused = (yield* events).filter((e) => e.reason === "InsufficientDisk")
      expect(refused).toHaveLength(1)
      expect(refused[0]).toMatchObject({ type: "Warning" })
      expect(refused[0]?.message).toContain("424Mi free of 1Gi")
      expect(yield* metrics.read("preheat_pulls_total", { result: "failed", reason: "insufficient_disk" })).toBe(1)
      expect(yield* metrics.read("preheat_image_fs_free_bytes", onDisk)).toBe(424 * Mi)
      expect(yield* metrics.read("preheat_image_fs_capacity_bytes", onDisk)).toBe(Gi)
      expect(yield* metrics.read("preheat_image_fs_unknown")).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(testLayer({ disk: { capacity: Gi }, defaultSize: 300 * Mi })))
  )

  it.effect("the default 10%: refused while the disk is full, pulled on the retry once room came back", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(500)
      expect(yield* fake.pulls).toEqual([])
      // The kubelet's image GC (or an operator) frees the disk before the retry after 1 s.
      yield* fake.setDisk({ capacity: Gi })
      yield* advance(2000)
      expect((yield* fake.pulls).map((p) => p.startedAt)).toEqual([1000])
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      // No Event for a success, throttled retries before it or not (the tag status says it: issue 29).
      expect((yield* events).map((e) => e.reason)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ disk: { capacity: Gi, otherUsed: 950 * Mi } })))
  )

  it.effect("a percentage names what it comes to in bytes", () =>
    Effect.gen(function* () {
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch()
      yield* advance(500)
      expect((yield* tagStatus("nginx", "1.25"))?.message).toBe(
        `failed to pull image "nginx:1.25": insufficient disk: 74Mi free of 1Gi on the image filesystem ${simulatedImageFsMountpoint}, ` +
          "below --min-free-disk 10% (102.4Mi)"
      )
    }).pipe(Effect.scoped, Effect.provide(testLayer({ disk: { capacity: Gi, otherUsed: 950 * Mi } })))
  )

  it.effect("on a full disk, IfNotPresent with the image there succeeds without a check; a pull is refused", () =>
    Effect.gen(function* () {
      const id = `sha256:${"a".repeat(64)}`
      const fake = yield* SimulatedRuntime
      yield* fake.addImage({ references: ["nginx:1.25"], id, size: Mi })
      yield* createNodeImage({
        nginx: { tags: [tag("1.25", { imagePullPolicy: "IfNotPresent" })] },
        redis: { tags: [tag("7", { imagePullPolicy: "Always", pullPolicy: { backoffLimit: 0 } })] }
      })
      yield* launch()
      yield* advance(500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", imageID: id })
      expect(yield* tagStatus("redis", "7")).toMatchObject({ phase: "Failed" })
      expect((yield* tagStatus("redis", "7"))?.message).toContain("insufficient disk: 0B free of 1Gi")
      expect(yield* fake.pulls).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ disk: { capacity: Gi, otherUsed: Gi - Mi } })))
  )

  it.effect("free space that cannot be told is said once in the log and by a metric, and pulls go on", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const metrics = yield* Metrics
      const lines: Array<string> = []
      const noMount = FilesystemStats.of({
        statfs: (path) => Effect.fail(new FilesystemStatsFailed({ path: `/host${path}`, message: "ENOENT: no such file or directory" }))
      })
      yield* Effect.gen(function* () {
        yield* createNodeImage({ nginx: { tags: [tag("1.25")] }, redis: { tags: [tag("7")] } })
        yield* launch({ minFreeDisk: minFreeDisk("100%") })
        yield* advance(2000)
      }).pipe(
        Effect.provideService(FilesystemStats, noMount),
        Effect.provide(loggingLayer({ format: "json", sink: (line) => lines.push(line) }))
      )
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("redis", "7"))?.phase).toBe("Succeeded")
      expect((yield* fake.pulls).length).toBe(2)
      const said = lines
        .map((line) => JSON.parse(line) as { readonly msg: string; readonly level: string; readonly reason?: string })
        .filter((line) => line.msg.includes("cannot tell the free space"))
      expect(said).toHaveLength(1)
      expect(said[0]?.level).toBe("warn")
      expect(said[0]?.reason).toContain(`statfs of the image filesystem ${simulatedImageFsMountpoint} failed`)
      expect(yield* metrics.read("preheat_image_fs_unknown")).toBe(1)
      expect((yield* metrics.render).body).not.toContain("preheat_image_fs_free_bytes{")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
