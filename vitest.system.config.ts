import { defineConfig } from "vitest/config"

/**
 * Whole-system tests (test/system): the built bundle as separate processes (API server,
 * controller, daemons on the simulated runtime) driven with kubectl. Files run one at a time:
 * each starts a cluster of processes, and several at once would compete for CPU and make the
 * real-time timings they check flaky. The files are named `*.system.ts` so that the default
 * config (`test/**\/*.test.ts`) does not pick them up.
 */
export default defineConfig({
  test: {
    include: ["test/system/**/*.system.ts"],
    globalSetup: ["test/system/globalSetup.ts"],
    testTimeout: 90_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
