import { describe, inject, it } from "vitest"
import type { E2eContext, E2eRuntime } from "./e2eEnv.ts"

/**
 * A suite of the real-runtime tests: `body` declares its tests with the runtime the global setup
 * started (test/e2e/globalSetup.ts). Without one (the setup could not start it, or the file runs
 * under another config) the suite is one skipped test that says why; in CI (PREHEAT_REQUIRE_E2E=1)
 * the global setup fails instead.
 */
export const describeE2e = (title: string, body: (e: E2eRuntime) => void): void => {
  const context: E2eContext = (inject("preheatE2e") as E2eContext | undefined) ?? {
    skipReason: "e2e tests run with `npm run test:e2e` (vitest.e2e.config.ts)"
  }
  describe(title, () => {
    if ("skipReason" in context) it.skip(`skipped: ${context.skipReason}`, () => {})
    else body(context.runtime)
  })
}
