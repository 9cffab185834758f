import { defineConfig } from "vitest/config"
import { unitTiers } from "./test/tiers.ts"

/**
 * `npm run test:slow`: the unit suite's slow tier (test/tiers.ts): the files that spawn a process
 * or listen on a socket, each in a module graph of its own as under `npx vitest run`.
 */
export default defineConfig({
  test: {
    include: unitTiers(import.meta.dirname).slow,
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
