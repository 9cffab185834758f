/**
 * Start-up time and idle memory of the two roles, for two bundles side by side (issue 25: the
 * product apart from its harness).
 *
 *   npm run build && npm run bench:roles -- --old /tmp/preheat-71f0eff/dist/preheat.mjs [--runs 5] [--idle 10] [--runtime-socket S]
 *   npm run build:bin && npm run bench:roles -- --old /tmp/preheat-71f0eff/dist/preheat --new dist/preheat
 *
 * A bundle (.mjs, .cjs) runs on this Node; anything else is run as an executable (the SEA). Compare
 * copies of executables, not the file build:bin has just written: that one sits in the page cache
 * in large folios, which a process maps whole, megabytes more RSS (docs/benchmarks.md, "Each role
 * ships only itself").
 *
 * One `preheat apiserver` (from the new bundle) serves every run. Each run starts, one at a time
 * and round-robin across the cases so background load spreads evenly, `preheat controller` and
 * `preheat daemon --runtime-socket S` of each bundle, with the NODE_OPTIONS (and, for the daemon,
 * the malloc setting) deploy/ ships. The daemon asks a real containerd, the e2e suite's (start it
 * first: test/e2e/runtime.sh start; PREHEAT_E2E_DIR says where), or the CRI socket of
 * `--runtime-socket`: the shipped daemon has no other runtime (the simulated one is the harness's,
 * issue 38), and both bundles' daemons ask the same one. It measures the time from spawn until
 * /readyz answers 200, then VmRSS after `--idle` seconds of idling, and stops the process (SIGTERM);
 * pulls are bench:daemon's. It also counts the project's modules each role's command
 * evaluates from the sources beside each bundle (`src/main.ts ROLE --help` under a module hook:
 * the bundles keep no module names). Figures are medians, with new/old ratios; the last line is
 * machine-readable.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { envFilePath, readEnvFile } from "../test/e2e/e2eEnv.ts"
import { eventually } from "../test/support/eventually.ts"
import { freePort } from "../test/support/freePort.ts"
import { statusBytes } from "./procStat.ts"
import { daemonSetEnv } from "./shippedDaemon.ts"
import { shippedControllerEnv } from "./shippedManifests.ts"

const { values } = parseArgs({
  options: {
    old: { type: "string", default: "/tmp/preheat-71f0eff/dist/preheat.mjs" },
    new: { type: "string", default: resolve(import.meta.dirname, "../dist/preheat.mjs") },
    runs: { type: "string", default: "5" },
    idle: { type: "string", default: "10" },
    "runtime-socket": { type: "string" }
  }
})
const runs = Number(values.runs)
const idleMs = Number(values.idle) * 1000
const bundles = { old: resolve(values.old), new: resolve(values.new) } as const
for (const path of Object.values(bundles)) {
  if (!existsSync(path)) {
    console.error(`bench:roles: ${path} is missing (npm run build; the old bundle: git archive, npm run build there)`)
    process.exit(1)
  }
}

/** The CRI socket the daemons ask: --runtime-socket, else the e2e suite's containerd. */
const criSocket = (): string => {
  if (values["runtime-socket"] !== undefined) return values["runtime-socket"]
  if (existsSync(envFilePath())) return readEnvFile().socket
  console.error(
    `bench:roles: no CRI runtime for the daemons: ${envFilePath()} is missing (test/e2e/runtime.sh start), or give --runtime-socket`
  )
  return process.exit(1)
}
const runtimeSocket = criSocket()

const dir = mkdtempSync(join(tmpdir(), "preheat-bench-roles-"))
const kubeconfig = join(dir, "kubeconfig")
const children = new Set<ChildProcess>()

const start = (bundle: string, args: ReadonlyArray<string>, env: Record<string, string>, log: string): ChildProcess => {
  const fd = openSync(log, "a")
  const [file, prefix] = /\.[cm]?js$/.test(bundle) ? [process.execPath, [bundle]] : [bundle, []]
  const child = spawn(file, [...prefix, ...args], { stdio: ["ignore", fd, fd], env: { ...process.env, ...env } })
  closeSync(fd)
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

const stop = (child: ChildProcess): Promise<void> =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done()
    child.once("exit", () => done())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
  })

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

type Role = "controller" | "daemon"
interface Case {
  readonly bundle: keyof typeof bundles
  readonly role: Role
}
const cases: ReadonlyArray<Case> = [
  { bundle: "old", role: "controller" },
  { bundle: "new", role: "controller" },
  { bundle: "old", role: "daemon" },
  { bundle: "new", role: "daemon" }
]
const nameOf = (c: Case) => `${c.role} (${c.bundle})`

const roleArgs = (role: Role, port: number): Array<string> =>
  role === "controller"
    ? ["controller", "--kubeconfig", kubeconfig, "--metrics-host", "127.0.0.1", "--metrics-port", String(port)]
    : ["daemon", "--kubeconfig", kubeconfig, "--node-name", "bench-node", "--runtime-socket", runtimeSocket, "--metrics-port", String(port)]

const roleEnv = (role: Role): Record<string, string> => (role === "controller" ? shippedControllerEnv() : daemonSetEnv())

interface Sample {
  readonly readyMs: number
  readonly rssBytes: number
}

const once = async (c: Case, run: number): Promise<Sample> => {
  const port = await freePort()
  const log = join(dir, `${c.role}-${c.bundle}-${run}.log`)
  const started = performance.now()
  const child = start(bundles[c.bundle], roleArgs(c.role, port), roleEnv(c.role), log)
  try {
    await eventually(
      `${nameOf(c)} ready`,
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${readFileSync(log, "utf8").slice(-2000)}`)
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined
      },
      60_000,
      10
    )
    const readyMs = performance.now() - started
    await sleep(idleMs)
    return { readyMs, rssBytes: statusBytes(child.pid!, "VmRSS") }
  } finally {
    await stop(child)
  }
}

/** The modules of the tree a bundle was built from that `src/main.ts ROLE --help` evaluates. */
const modulesEvaluated = (bundle: string, role: Role): number => {
  const tree = dirname(dirname(bundle))
  const hook =
    'import { registerHooks } from "node:module"; registerHooks({ load(url, context, next) { ' +
    'if (url.startsWith("file:")) process.stderr.write("evaluated " + url + "\\n"); return next(url, context) } })'
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(hook)}`,
      "--experimental-strip-types",
      "--no-warnings",
      join(tree, "src/main.ts"),
      role,
      "--help"
    ],
    { encoding: "utf8", cwd: tree }
  )
  if (result.status !== 0) throw new Error(`${tree}/src/main.ts ${role} --help exited ${result.status}: ${result.stderr.slice(-2000)}`)
  const prefix = `evaluated ${pathToFileURL(tree).href}/`
  return result.stderr.split("\n").filter((line) => line.startsWith(prefix) && !line.includes("/node_modules/") && line.endsWith(".ts"))
    .length
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const mib = (bytes: number) => bytes / 1024 / 1024

const main = async () => {
  const apiserver = start(bundles.new, ["apiserver", "--port", "0", "--kubeconfig-out", kubeconfig], {}, join(dir, "apiserver.log"))
  const server = await eventually(
    "the API server's address",
    async () => /listening on (http:\/\/\S+)/.exec(readFileSync(join(dir, "apiserver.log"), "utf8"))?.[1],
    30_000,
    100
  )
  for (const name of ["preheat-system", "preheat-daemon-config"]) {
    const response = await fetch(`${server}/api/v1/namespaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
    })
    if (!response.ok && response.status !== 409) throw new Error(`namespace ${name}: HTTP ${response.status}`)
  }
  console.log(`bench:roles: ${runs} runs of each, ${values.idle} s idle before VmRSS; old ${bundles.old}, new ${bundles.new}`)
  const samples = new Map(cases.map((c) => [nameOf(c), [] as Array<Sample>]))
  // One unmeasured round first: the page cache holds both bundles, the API server has warmed up.
  for (const c of cases) await once(c, 0)
  for (let run = 1; run <= runs; run++) {
    for (const c of cases) samples.get(nameOf(c))!.push(await once(c, run))
  }
  await stop(apiserver)

  const figures: Record<string, number> = {}
  console.log(`${"".padEnd(18)} ${"ready ms".padStart(9)} ${"idle RSS MiB".padStart(13)} ${"modules".padStart(8)}`)
  for (const c of cases) {
    const s = samples.get(nameOf(c))!
    const ready = median(s.map((x) => x.readyMs))
    const rss = mib(median(s.map((x) => x.rssBytes)))
    figures[`${c.role}_${c.bundle}_ready_ms`] = Math.round(ready)
    figures[`${c.role}_${c.bundle}_rss_mib`] = Number(rss.toFixed(1))
    const modules = modulesEvaluated(bundles[c.bundle], c.role)
    figures[`${c.role}_${c.bundle}_modules`] = modules
    console.log(`${nameOf(c).padEnd(18)} ${ready.toFixed(0).padStart(9)} ${rss.toFixed(1).padStart(13)} ${String(modules).padStart(8)}`)
  }
  for (const role of ["controller", "daemon"] as const) {
    const ready = figures[`${role}_new_ready_ms`]! / figures[`${role}_old_ready_ms`]!
    const rss = figures[`${role}_new_rss_mib`]! / figures[`${role}_old_rss_mib`]!
    figures[`${role}_ready_ratio`] = Number(ready.toFixed(3))
    figures[`${role}_rss_ratio`] = Number(rss.toFixed(3))
    console.log(`${role} new/old: start-up ${ready.toFixed(2)}, idle RSS ${rss.toFixed(2)}`)
  }
  console.log(JSON.stringify(figures))
}

try {
  await main()
} catch (error) {
  console.error(`bench:roles: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await Promise.all([...children].map(stop))
  rmSync(dir, { recursive: true, force: true })
}
