/**
 * Start-up time of `preheat version` for each way of running preheat.
 *
 *   npm run build && npm run build:bin && npm run bench:startup
 *
 * Builds nothing: expects dist/preheat.mjs and dist/preheat. Each case gets one unmeasured
 * warm-up run (which also checks it works), then RUNS measured runs, taken round-robin across
 * the cases so that background noise spreads evenly. Wall time of spawn to exit, in ms.
 * The last line is machine-readable.
 */
import { spawnSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const RUNS = 15

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const bundle = join(root, "dist", "preheat.mjs")
const executable = join(root, "dist", "preheat")
const deno = join(root, "node_modules", ".bin", "deno")

const fail = (message: string): never => {
  console.error(`bench:startup: ${message}`)
  process.exit(1)
}

const node24 = ((): string => {
  if (process.versions.node.split(".")[0] === "24") return process.execPath
  const candidate = join(root, "node_modules", `node-linux-${process.arch}`, "bin", "node")
  return existsSync(candidate) ? candidate : fail(`no Node 24 (running ${process.versions.node}); run through npm`)
})()

for (const path of [bundle, executable, deno]) {
  if (!existsSync(path)) fail(`${path} is missing: run npm run build && npm run build:bin first`)
}

interface Case {
  readonly key: string
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}

const cases: ReadonlyArray<Case> = [
  { key: "bundle_node_ms", name: "bundle, Node 24", command: node24, args: [bundle] },
  { key: "bundle_deno_ms", name: "bundle, Deno", command: deno, args: ["run", "-A", bundle] },
  { key: "exe_ms", name: "executable (SEA)", command: executable, args: [] },
  {
    key: "src_node_ms",
    name: "sources, Node 24",
    command: node24,
    args: ["--experimental-strip-types", "--no-warnings", join(root, "src", "main.ts")]
  }
]

const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1" }

const once = (c: Case): number => {
  const started = performance.now()
  const result = spawnSync(c.command, [...c.args, "version"], { cwd: root, env, encoding: "utf8" })
  const elapsed = performance.now() - started
  if (result.error) fail(`${c.name}: ${result.error.message}`)
  if (result.status !== 0 || !result.stdout.startsWith("preheat ")) {
    fail(`${c.name}: exited ${result.status ?? result.signal}: ${result.stdout}${result.stderr}`)
  }
  return elapsed
}

const samples = new Map<Case, Array<number>>(cases.map((c) => [c, []]))
for (const c of cases) once(c)
for (let i = 0; i < RUNS; i++) {
  for (const c of cases) samples.get(c)?.push(once(c))
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2
}

console.log(`preheat version, ${RUNS} runs each (+1 warm-up), wall ms`)
console.log(`${"".padEnd(20)}${"median".padStart(8)}${"min".padStart(8)}`)
const medians: Record<string, number> = {}
for (const c of cases) {
  const values = samples.get(c) ?? []
  medians[c.key] = median(values)
  console.log(
    `${c.name.padEnd(20)}${median(values).toFixed(1).padStart(8)}${Math.min(...values)
      .toFixed(1)
      .padStart(8)}`
  )
}

const bundleKib = statSync(bundle).size / 1024
const exeMib = statSync(executable).size / 1024 / 1024
const nodeVersion = spawnSync(node24, ["--version"], { encoding: "utf8" }).stdout.trim()
console.log(`dist/preheat.mjs ${bundleKib.toFixed(0)} KiB, dist/preheat ${exeMib.toFixed(1)} MiB, Node ${nodeVersion}`)
console.log(
  "bench:startup " +
    cases.map((c) => `${c.key}=${(medians[c.key] ?? NaN).toFixed(0)}`).join(" ") +
    ` bundle_kib=${bundleKib.toFixed(0)} exe_mib=${exeMib.toFixed(1)}`
)
