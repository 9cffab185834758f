import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { simulatedImageFsMountpoint } from "../../harness/layers/simulatedRuntime/config.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import { makeDiskCheck } from "../../src/daemon/diskCheck.ts"
import { parseMinFreeDisk } from "../../src/daemon/minFreeDisk.ts"
import { Metrics } from "../../src/ops/metrics.ts"

const Gi = 2 ** 30
const Mi = 2 ** 20
const onDisk = { mountpoint: simulatedImageFsMountpoint }
const min = Result.getOrThrow(parseMinFreeDisk("500Mi"))

/** The disk check on a simulated node whose ImageFsInfo takes 10 ms, counting its ImageFsInfo and statfs calls. */
const checked = Effect.gen(function* () {
  const fake = yield* SimulatedRuntime
  const cri = yield* CriRuntime
  const stats = yield* FilesystemStats
  let statfsCalls = 0
  const slowFsInfo = CriRuntime.of({ ...cri, imageFsInfo: Effect.andThen(Effect.sleep("10 millis"), cri.imageFsInfo) })
  const counting = FilesystemStats.of({
    statfs: (path) =>
      Effect.andThen(
        Effect.sync(() => statfsCalls++),
        stats.statfs(path)
      )
  })
  const disk = yield* makeDiskCheck(min).pipe(
    Effect.provideService(FilesystemStats, counting),
    Effect.provideService(CriRuntime, slowFsInfo)
  )
  return {
    fake,
    /** A check, with the runtime's 10 ms passed. */
    check: Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(disk.check)
      yield* TestClock.adjust("10 millis")
      return yield* Fiber.join(fiber)
    }),
    disk,
    imageFsInfoCalls: Effect.map(fake.calls, (calls) => calls.filter((c) => c.method === "imageFsInfo").length),
    statfsCalls: () => statfsCalls
  }
})

describe("the disk check before each attempt", () => {
  it.effect("asks ImageFsInfo at most once per 5 s, attempts starting together sharing the call; statfs every time", () =>
    Effect.gen(function* () {
      const { disk, check, imageFsInfoCalls, statfsCalls } = yield* checked
      const together = yield* Effect.forkChild(Effect.all([disk.check, disk.check, disk.check], { concurrency: "unbounded" }))
      yield* TestClock.adjust("10 millis")
      expect(yield* Fiber.join(together)).toEqual([undefined, undefined, undefined])
      expect(yield* imageFsInfoCalls).toBe(1)
      expect(statfsCalls()).toBe(3)
      // The answer is kept 5 s from when it came (at 10 ms).
      yield* TestClock.adjust("4999 millis")
      expect(yield* disk.check).toBeUndefined()
      expect(yield* imageFsInfoCalls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* check).toBeUndefined()
      expect(yield* imageFsInfoCalls).toBe(2)
      expect(statfsCalls()).toBe(5)
    }).pipe(Effect.provide(Layer.mergeAll(SimulatedRuntime.layer({ disk: { capacity: Gi } }), Metrics.layerTest)))
  )

  it.effect("decides on the room as it is now: a disk that fills within the 5 s is refused at once, and freed, pulls again", () =>
    Effect.gen(function* () {
      const { fake, disk, check, imageFsInfoCalls } = yield* checked
      const metrics = yield* Metrics
      expect(yield* check).toBeUndefined()
      yield* TestClock.adjust("1 second")
      yield* fake.setDisk({ capacity: Gi, otherUsed: 600 * Mi })
      const short = yield* disk.check
      expect(short?._tag).toBe("InsufficientDisk")
      expect(short?.room.freeBytes).toBe(424 * Mi)
      expect(yield* metrics.read("preheat_image_fs_free_bytes", onDisk)).toBe(424 * Mi)
      yield* fake.setDisk({ capacity: Gi })
      expect(yield* disk.check).toBeUndefined()
      expect(yield* metrics.read("preheat_image_fs_free_bytes", onDisk)).toBe(Gi)
      expect(yield* imageFsInfoCalls).toBe(1)
    }).pipe(Effect.provide(Layer.mergeAll(SimulatedRuntime.layer({ disk: { capacity: Gi } }), Metrics.layerTest)))
  )

  it.effect("a runtime that did not answer ImageFsInfo is asked again after 5 s; meanwhile pulls go on unchecked", () =>
    Effect.gen(function* () {
      const { fake, disk, check, imageFsInfoCalls } = yield* checked
      const metrics = yield* Metrics
      yield* fake.setAvailable(false)
      expect(yield* check).toBeUndefined()
      expect(yield* metrics.read("preheat_image_fs_unknown")).toBe(1)
      yield* fake.setAvailable(true)
      yield* TestClock.adjust("1 second")
      expect(yield* disk.check).toBeUndefined()
      expect(yield* imageFsInfoCalls).toBe(1)
      expect(yield* metrics.read("preheat_image_fs_unknown")).toBe(1)
      yield* TestClock.adjust("4 seconds")
      yield* fake.setDisk({ capacity: Gi, otherUsed: 600 * Mi })
      expect((yield* check)?._tag).toBe("InsufficientDisk")
      expect(yield* imageFsInfoCalls).toBe(2)
      expect(yield* metrics.read("preheat_image_fs_unknown")).toBe(0)
    }).pipe(Effect.provide(Layer.mergeAll(SimulatedRuntime.layer({ disk: { capacity: Gi } }), Metrics.layerTest)))
  )
})
