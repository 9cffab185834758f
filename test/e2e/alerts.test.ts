/**
 * deploy/monitoring/alerts.yaml checked by Prometheus's own promtool (installed by runtime.sh with
 * the rest of the e2e tools): the rules load (expressions and annotation templates), and fire,
 * or stay quiet, on the series in alerts.promtool.yml as the alerts promise.
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, inject, it } from "vitest"
import { parse, stringify } from "yaml"
import type { E2eContext } from "./e2eEnv.ts"

const provided = inject("preheatE2e") as E2eContext | undefined
const context: E2eContext = provided ?? { skipReason: "e2e tests run with `npm run test:e2e` (vitest.e2e.config.ts)" }
const root = resolve(import.meta.dirname, "../..")

if ("skipReason" in context) {
  describe("alerts under promtool", () => {
    it.skip(`skipped: ${context.skipReason}`, () => {})
  })
} else {
  const dir = mkdtempSync(join(tmpdir(), "preheat-promtool-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const rule = parse(readFileSync(join(root, "deploy", "monitoring", "alerts.yaml"), "utf8"))
  const promtool = (args: ReadonlyArray<string>) => spawnSync("promtool", args, { cwd: dir, encoding: "utf8", timeout: 60_000 })

  describe("alerts under promtool", () => {
    it("load: every expression and annotation template is valid", () => {
      writeFileSync(join(dir, "full.yml"), stringify(rule.spec))
      const checked = promtool(["check", "rules", "full.yml"])
      expect(checked.stdout + checked.stderr).toMatch(/SUCCESS: \d+ rules found/)
      expect(checked.status).toBe(0)
    })

    it("fire on a missing leader, a silent daemon, failing pulls and stuck jobs, and only then", () => {
      // promtool compares annotations exactly; the expressions are what is tested here.
      const spec = structuredClone(rule.spec)
      for (const group of spec.groups) for (const r of group.rules) delete r.annotations
      writeFileSync(join(dir, "rules.yml"), stringify(spec))
      copyFileSync(join(import.meta.dirname, "alerts.promtool.yml"), join(dir, "tests.yml"))
      const tested = promtool(["test", "rules", "tests.yml"])
      expect(tested.stdout + tested.stderr).toContain("SUCCESS")
      expect(tested.status).toBe(0)
    })
  })
}
