// The lock the system tests take the real runtime in turn with (test/system/realRuntimeLease.ts).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { acquireFileLock } from "./fileLock.ts"

const lockPath = () => join(mkdtempSync(join(tmpdir(), "preheat-lock-")), "lock")

/** A lock left as another process would leave it. */
const heldBy = (path: string, pid: number) => {
  mkdirSync(path)
  writeFileSync(join(path, "pid"), String(pid))
}

/** Above Linux's largest pid_max (2^22): no process has it. */
const noSuchPid = 2 ** 22 + 1

describe("acquireFileLock", () => {
  it("holds off a second holder until the first releases, and records the holder's pid", async () => {
    const path = lockPath()
    const releaseFirst = await acquireFileLock(path, "the first", 5_000)
    expect(readFileSync(join(path, "pid"), "utf8")).toBe(String(process.pid))
    let second = false
    const acquiring = acquireFileLock(path, "the second", 5_000).then((release) => {
      second = true
      return release
    })
    await new Promise((done) => setTimeout(done, 300))
    expect(second).toBe(false)
    releaseFirst()
    const releaseSecond = await acquiring
    expect(second).toBe(true)
    releaseSecond()
  })

  it("takes over a lock whose holder is gone", async () => {
    const path = lockPath()
    heldBy(path, noSuchPid)
    const release = await acquireFileLock(path, "the runtime", 2_000)
    expect(readFileSync(join(path, "pid"), "utf8")).toBe(String(process.pid))
    release()
  })

  it("gives up after its timeout, naming what it waited for and the holder", async () => {
    const path = lockPath()
    heldBy(path, process.pid)
    await expect(acquireFileLock(path, "the real runtime for a test", 300)).rejects.toThrow(
      new RegExp(`timed out after 300 ms waiting for the real runtime for a test \\(.*, held by pid ${process.pid}\\)`)
    )
  })
})
