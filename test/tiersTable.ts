import { globSync } from "node:fs"
import e2eConfig from "../vitest.e2e.config.ts"
import faultsConfig from "../vitest.faults.config.ts"
import systemConfig from "../vitest.system.config.ts"
import { type Tier, unitTestFiles, unitTiers } from "./tiers.ts"

/**
 * The README's table of test tiers: each tier's command, what it holds, how many files (from the
 * rules and configs: test/architecture/testTiers.test.ts checks them) and, as measured by
 * `npm run test:tiers-table -- TIER...` (test/measureTiers.ts), how many tests ran and how long
 * the command took, with the machine's load then.
 */
export type TableTier = Tier | "unit" | "e2e" | "system" | "faults"

export interface TierRow {
  readonly tier: TableTier
  /** As the README gives it. */
  readonly command: string
  /** The command measureTiers.ts runs; vitest's own arguments follow it. */
  readonly run: ReadonlyArray<string>
  readonly holds: string
  readonly files: (root: string) => ReadonlyArray<string>
}

const included = (root: string, include: ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  globSync([...(include ?? [])], { cwd: root }).sort()

export const tierRows: ReadonlyArray<TierRow> = [
  {
    tier: "fast",
    command: "npm run test:fast",
    run: ["npm", "run", "test:fast", "--"],
    holds: "for the edit loop: decisions, mappings, the work queue, stores and caches, the in-memory KubeApi's conformance suite",
    files: (root) => unitTiers(root).fast
  },
  {
    tier: "scenario",
    command: "npm run test:scenario",
    run: ["npm", "run", "test:scenario", "--"],
    holds:
      "the controller, the daemon and the simulated cluster whole, on the in-memory API server and simulated time; the harness's API server and cluster",
    files: (root) => unitTiers(root).scenario
  },
  {
    tier: "slow",
    command: "npm run test:slow",
    run: ["npm", "run", "test:slow", "--"],
    holds:
      "what spawns a process (kubectl, the CLI, exec plugins, Python) or listens on a socket (the embedded API server, test servers for the live clients)",
    files: (root) => unitTiers(root).slow
  },
  {
    tier: "unit",
    command: "npx vitest run",
    run: ["npx", "vitest", "run"],
    holds: "the three above, each file in a module graph of its own (what `npm test` runs as the three tiers)",
    files: unitTestFiles
  },
  {
    tier: "e2e",
    command: "npm run test:e2e",
    run: ["npm", "run", "test:e2e", "--"],
    holds: "the CRI layer and in-process daemons against a real containerd and registries (test/e2e/runtime.sh)",
    files: (root) => included(root, e2eConfig.test?.include)
  },
  {
    tier: "system",
    command: "npm run test:system",
    run: ["npm", "run", "test:system", "--"],
    holds: "the built bundle as separate processes, driven with kubectl",
    files: (root) => included(root, systemConfig.test?.include)
  },
  {
    tier: "faults",
    command: "npm run test:faults",
    run: ["npm", "run", "test:faults", "--"],
    holds: "those processes behind a fault-injecting proxy",
    files: (root) => included(root, faultsConfig.test?.include)
  }
]

/** What a run of a tier's command gave. */
export interface Measured {
  readonly tests: number
  readonly seconds: number
  /** The one-minute load average when the run started. */
  readonly load: number
  /** YYYY-MM-DD. */
  readonly date: string
}

export interface TableLine {
  readonly tier: TableTier
  readonly files: number
  readonly measured: Measured | undefined
}

export const tableStart = "<!-- test tiers: npm run test:tiers-table -->"
export const tableEnd = "<!-- end of test tiers -->"

const header = ["| tier | command | what it holds | files | tests | time, measured |", "| --- | --- | --- | --- | --- | --- |"]

const duration = (seconds: number): string => {
  const whole = Math.round(seconds)
  return whole < 60 ? `${whole} s` : `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`
}

/** The table, one line a tier of `tierRows`, between its markers. */
export const renderTable = (lines: ReadonlyArray<TableLine>): string => {
  const body = tierRows.map((row) => {
    const line = lines.find((l) => l.tier === row.tier)
    const m = line?.measured
    const tests = m === undefined ? "not measured" : String(m.tests)
    const time = m === undefined ? "not measured" : `${duration(m.seconds)} at load ${m.load.toFixed(1)} (${m.date})`
    return `| ${row.tier} | \`${row.command}\` | ${row.holds} | ${line?.files ?? 0} | ${tests} | ${time} |`
  })
  return [tableStart, ...header, ...body, tableEnd].join("\n")
}

const measuredPattern = /^(?:(\d+) min )?(\d+) s at load ([\d.]+) \((\d{4}-\d{2}-\d{2})\)$/

/** The table's lines as the README has them (none when it has no table). */
export const parseTable = (readme: string): Array<TableLine> => {
  const start = readme.indexOf(tableStart)
  const end = readme.indexOf(tableEnd)
  if (start < 0 || end < start) return []
  return readme
    .slice(start + tableStart.length, end)
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| tier |") && !line.startsWith("| ---"))
    .map((line) => {
      const cells = line
        .slice(2, -2)
        .split(" | ")
        .map((c) => c.trim())
      const [tier, , , files, tests, time] = cells
      const m = measuredPattern.exec(time ?? "")
      return {
        tier: tier as TableTier,
        files: Number(files),
        measured:
          m === null ? undefined : { tests: Number(tests), seconds: Number(m[1] ?? 0) * 60 + Number(m[2]), load: Number(m[3]), date: m[4]! }
      }
    })
}

/** `readme` with its table replaced by `table`. */
export const withTable = (readme: string, table: string): string => {
  const start = readme.indexOf(tableStart)
  const end = readme.indexOf(tableEnd)
  if (start < 0 || end < start) throw new Error(`the README has no table of tiers between "${tableStart}" and "${tableEnd}"`)
  return readme.slice(0, start) + table + readme.slice(end + tableEnd.length)
}
