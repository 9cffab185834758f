import { defineConfig } from "vitest/config"

/**
 * Faults between the processes (test/faults, issue 13): the built bundle's processes with a
 * fault-injecting proxy between them and the API server. One file, one test at a time: the
 * scenarios share a cluster and compare makespans with its fault-free run. The 2-minute outage
 * makes the suite take several minutes, hence its own config (and `npm run test:faults`), which
 * `npm test` runs at the same time as the system tier (test/runTogether.ts): both mostly wait in
 * real time, and the fault-free run the makespans are compared with shares that load.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.faults.ts"],
    globalSetup: ["test/system/globalSetup.ts"],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
