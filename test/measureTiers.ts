// `npm run test:tiers-table [-- TIER...]`: rewrites the README's table of test tiers
// (test/tiersTable.ts). Every tier's file count comes from the rules and configs; each TIER named
// (fast, scenario, slow, unit, e2e, system, faults) is run with its own command, and the tests it
// ran, the wall time and the load average at its start replace that tier's figures. A run with a
// failure changes nothing: its figures would not be the tier's.
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Measured, parseTable, renderTable, type TableLine, tierRows, withTable } from "./tiersTable.ts"

const root = join(import.meta.dirname, "..")
const readmePath = join(root, "README.md")

const loadAverage = (): number => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0])

const measure = (tier: string): Measured => {
  const row = tierRows.find((r) => r.tier === tier)
  if (row === undefined) throw new Error(`no tier ${tier}; the tiers: ${tierRows.map((r) => r.tier).join(", ")}`)
  const dir = mkdtempSync(join(tmpdir(), "preheat-tiers-"))
  const report = join(dir, "report.json")
  try {
    const load = loadAverage()
    const started = performance.now()
    const [command, ...args] = row.run
    const run = spawnSync(command!, [...args, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], {
      cwd: root,
      stdio: "inherit"
    })
    const seconds = (performance.now() - started) / 1000
    const result = JSON.parse(readFileSync(report, "utf8")) as { numTotalTests: number; numFailedTests: number; success: boolean }
    if (run.status !== 0 || !result.success || result.numFailedTests > 0) {
      throw new Error(`${row.command} failed (exit ${run.status}, ${result.numFailedTests} failed): its figures are not written`)
    }
    return { tests: result.numTotalTests, seconds, load, date: new Date().toISOString().slice(0, 10) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const readme = readFileSync(readmePath, "utf8")
const before = parseTable(readme)
const measured = new Map(process.argv.slice(2).map((tier) => [tier, measure(tier)]))
const lines: Array<TableLine> = tierRows.map((row) => ({
  tier: row.tier,
  files: row.files(root).length,
  measured: measured.get(row.tier) ?? before.find((l) => l.tier === row.tier)?.measured
}))
writeFileSync(readmePath, withTable(readme, renderTable(lines)))
for (const [tier, m] of measured) console.log(`${tier}: ${m.tests} tests in ${m.seconds.toFixed(1)} s at load ${m.load}`)
