import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-runtime suite has its own config (vitest.e2e.config.ts) and runs after this one.
    exclude: [...configDefaults.exclude, "test/e2e/**"],
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
