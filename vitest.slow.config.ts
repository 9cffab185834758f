import { defineConfig } from "vitest/config"
import { unitTiers } from "./test/tiers.ts"

/**
 * `npm run test:slow`: the unit suite's slow tier (test/tiers.ts): the files that spawn a process
 * or listen on a socket, each in a module graph of its own as under `npx vitest run`. A worker per
 * core (vitest's default leaves one core to its own process, which here mostly waits): most of the
 * time goes to the processes the files start, so on two cores two files at a time take the tier
 * from about 3 minutes to about 2.
 */
export default defineConfig({
  test: {
    include: unitTiers(import.meta.dirname).slow,
    testTimeout: 60_000,
    maxWorkers: "100%",
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
