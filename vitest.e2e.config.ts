import { defineConfig } from "vitest/config"

/**
 * End-to-end tests against a real containerd and registries (test/e2e/runtime.sh), started once by
 * the global setup. Files run one at a time: they share one containerd.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/e2e/globalSetup.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
