import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { e2eDir, envFilePath, readEnvFile, runtimeScript } from "../e2e/e2eEnv.ts"
import type { E2eRuntime } from "../e2e/e2eEnv.ts"
import { acquireFileLock } from "../support/fileLock.ts"

const runScript = (command: "start" | "stop" | "status") =>
  spawnSync("bash", [runtimeScript, command], { stdio: ["ignore", "inherit", "inherit"], timeout: 10 * 60_000 })

/** The real runtime of the e2e suite for one system test file, or why it could not be had. */
export type RuntimeLease =
  | { readonly runtime: E2eRuntime; readonly release: () => void }
  | { readonly skipReason: string; readonly release: () => void }

/**
 * Waits until no other system test file holds the runtime (the files run two at a time, and one
 * containerd with its registries is shared: one file's `stop` would pull it from under the other),
 * then uses the running runtime (test/e2e/runtime.sh) or starts one, which `release` then stops
 * unless PREHEAT_E2E_KEEP=1. Where it cannot be started the test is skipped with the reason, except
 * under PREHEAT_REQUIRE_E2E=1 (CI), where that throws.
 */
export const leaseRealRuntime = async (what: string): Promise<RuntimeLease> => {
  const unlock = await acquireFileLock(`${e2eDir()}.system-lease`, `the real runtime for ${what}`, 10 * 60_000)
  let startedHere = false
  if (!existsSync(envFilePath()) || runScript("status").status !== 0) {
    const started = runScript("start")
    if (started.status !== 0) {
      unlock()
      const skipReason = `test/e2e/runtime.sh start failed (exit ${started.status ?? started.signal})`
      if (process.env["PREHEAT_REQUIRE_E2E"] === "1") throw new Error(`PREHEAT_REQUIRE_E2E=1 and ${skipReason}`)
      process.stderr.write(`\n[system] SKIPPING ${what}: ${skipReason}\n\n`)
      return { skipReason, release: () => {} }
    }
    startedHere = true
  }
  const release = () => {
    if (startedHere && process.env["PREHEAT_E2E_KEEP"] !== "1") runScript("stop")
    unlock()
  }
  return { runtime: readEnvFile(), release }
}
