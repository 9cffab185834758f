/**
 * A lock between processes on one machine: a directory that only one of them can create, holding
 * its owner's pid. A lock whose owner died (killed mid-test) is taken over, not waited on forever.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const ownerOf = (path: string): number | undefined => {
  try {
    const pid = Number(readFileSync(join(path, "pid"), "utf8"))
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Waits until this process holds the lock at `path`, for at most `timeoutMs`; resolves with its release. */
export const acquireFileLock = async (path: string, what: string, timeoutMs: number): Promise<() => void> => {
  const deadline = Date.now() + timeoutMs
  // An owner that has not written its pid yet is given this long before the lock counts as abandoned.
  let ownerlessSince: number | undefined
  for (;;) {
    try {
      mkdirSync(path)
      writeFileSync(join(path, "pid"), String(process.pid))
      return () => rmSync(path, { recursive: true, force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const owner = ownerOf(path)
    if (owner === undefined) ownerlessSince ??= Date.now()
    else ownerlessSince = undefined
    const abandoned = owner === undefined ? Date.now() - (ownerlessSince ?? Date.now()) > 5_000 : !alive(owner)
    if (abandoned) {
      rmSync(path, { recursive: true, force: true })
      continue
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${path}, held by pid ${owner ?? "?"})`)
    await sleep(250)
  }
}
