import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import type { TestProject } from "vitest/node"
import { envFilePath, readEnvFile, runtimeScript } from "./e2eEnv.ts"

const runScript = (command: "start" | "stop" | "status") =>
  spawnSync("bash", [runtimeScript, command], { stdio: ["ignore", "inherit", "inherit"], timeout: 10 * 60_000 })

/**
 * Starts the real runtime (containerd and two registries) unless one is already running, and hands
 * its addresses to the tests. Without it every e2e test is skipped with a message saying why;
 * with PREHEAT_REQUIRE_E2E=1 (CI) that is a failure instead. A runtime this setup started is
 * stopped afterwards unless PREHEAT_E2E_KEEP=1.
 */
export default function setup(project: TestProject): (() => void) | undefined {
  const required = process.env["PREHEAT_REQUIRE_E2E"] === "1"
  let startedHere = false
  if (!existsSync(envFilePath()) || runScript("status").status !== 0) {
    const started = runScript("start")
    if (started.status !== 0) {
      const reason =
        started.error !== undefined
          ? `test/e2e/runtime.sh start could not run: ${started.error.message}`
          : `test/e2e/runtime.sh start failed (exit ${started.status ?? started.signal}); see its output above`
      if (required) throw new Error(`PREHEAT_REQUIRE_E2E=1 and ${reason}`)
      process.stderr.write(`\n[e2e] SKIPPING every e2e test: ${reason}\n\n`)
      project.provide("preheatE2e", { skipReason: reason })
      return undefined
    }
    startedHere = true
  }
  project.provide("preheatE2e", { runtime: readEnvFile() })
  return () => {
    if (startedHere && process.env["PREHEAT_E2E_KEEP"] !== "1") runScript("stop")
  }
}
