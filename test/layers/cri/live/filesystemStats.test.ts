import { mkdirSync, mkdtempSync, rmSync, statfsSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { filesystemStatsAt } from "../../../../layers/cri/live/filesystemStats.ts"

const sized = (path: string) => {
  const stats = statfsSync(path)
  return stats.blocks * stats.bsize
}

describe("FilesystemStats (statfs under the host's root)", () => {
  const hostRoot = mkdtempSync(join(tmpdir(), "preheat-hostroot-"))
  afterAll(() => rmSync(hostRoot, { recursive: true, force: true }))

  it.effect("on the node itself (root /): the size of the filesystem that holds the path", () =>
    Effect.gen(function* () {
      const size = yield* filesystemStatsAt("/").statfs(tmpdir())
      assert.strictEqual(size.totalBytes, sized(tmpdir()))
      assert.isAbove(size.freeBytes, 0)
      assert.isAtMost(size.freeBytes, size.totalBytes)
    })
  )

  it.effect("in a container: the node's path is read under --host-root, where the DaemonSet mounts it", () =>
    Effect.gen(function* () {
      // /host/var/lib/containerd stands for a hostPath mount of the node's /var/lib/containerd.
      mkdirSync(join(hostRoot, "var", "lib"), { recursive: true })
      symlinkSync("/dev", join(hostRoot, "var", "lib", "containerd"))
      const size = yield* filesystemStatsAt(hostRoot).statfs("/var/lib/containerd")
      assert.strictEqual(size.totalBytes, sized("/dev"))
      assert.notStrictEqual(sized("/dev"), sized(hostRoot))
    })
  )

  it.effect("a path not mounted there fails, naming the path tried, instead of sizing another filesystem", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(filesystemStatsAt(hostRoot).statfs("/var/lib/containers/storage"))
      assert.strictEqual(failure._tag, "FilesystemStatsFailed")
      assert.strictEqual(failure.path, join(hostRoot, "var/lib/containers/storage"))
      assert.include(failure.message, "ENOENT")
    })
  )
})
