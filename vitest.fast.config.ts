import { defineConfig } from "vitest/config"
import { unitTiers } from "./test/tiers.ts"

/**
 * `npm run test:fast`, for the edit loop: the unit suite's fast tier (test/tiers.ts: no process,
 * no socket, no whole role or simulated cluster). Its files share one module graph per worker
 * (isolate off: most of an isolated run is spent importing the same modules again for each
 * file); test/architecture/testTiers.test.ts keeps them from stubbing globals or mocking modules.
 * `npx vitest run` and `npm test` run every tier, each file on its own.
 */
export default defineConfig({
  test: {
    include: unitTiers(import.meta.dirname).fast,
    isolate: false,
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
