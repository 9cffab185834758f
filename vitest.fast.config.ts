import { configDefaults, defineConfig } from "vitest/config"
import { slowTests } from "./test/tiers.ts"

/**
 * `npm run test:fast`, for the edit loop: the unit suite (vitest.config.ts) without the files that
 * spawn processes or listen on sockets (test/tiers.ts lists them), so only pure and in-process
 * tests run. The README's test command still runs everything.
 */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, "test/e2e/**", ...slowTests],
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
