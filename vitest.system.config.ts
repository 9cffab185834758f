import { defineConfig } from "vitest/config"

/**
 * Whole-system tests (test/system): the built bundle as separate processes (API server,
 * controller, daemons on the simulated runtime) driven with kubectl. Two files run at a time: they
 * mostly wait in real time (the load average of one at a time is about 1 on two cores), each has
 * its own processes, ports (picked free), temp dir and kubeconfig, and what they assert of timing
 * are bounds that hold with one other file running. The two on the e2e suite's real containerd
 * (image, realRuntime) take it in turn (test/system/realRuntimeLease.ts). The files are named
 * `*.system.ts` so that the default config (`test/**\/*.test.ts`) does not pick them up.
 */
export default defineConfig({
  test: {
    include: ["test/system/**/*.system.ts"],
    globalSetup: ["test/system/globalSetup.ts"],
    testTimeout: 90_000,
    hookTimeout: 90_000,
    maxWorkers: 2,
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
