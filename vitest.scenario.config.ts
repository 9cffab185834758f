import { defineConfig } from "vitest/config"
import { unitTiers } from "./test/tiers.ts"

/**
 * `npm run test:scenario`: the unit suite's scenario tier (test/tiers.ts): the controller, the
 * daemon and the simulated cluster run whole on the in-memory API server and simulated time, and
 * the harness's own tests. One module graph per worker, as the fast tier's (vitest.fast.config.ts).
 */
export default defineConfig({
  test: {
    include: unitTiers(import.meta.dirname).scenario,
    isolate: false,
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
