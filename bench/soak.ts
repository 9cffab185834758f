/**
 * npm run bench:soak -- [--cycles 5] [--jobs 250] [--nodes 3] [--settle-s 20] [--only dev|separate]
 *                       [--fleet-qps 50] [--max-old-space-size MB] [--heap-snapshots] [--cpu-prof NAME]
 *                       [--trace-gc NAME] [--keep]
 *
 * Whether memory comes back after load (issue 24). The built bundle (dist/preheat.mjs, built by the
 * npm script first) runs in two set-ups, one after the other:
 * - `dev`: `preheat dev --nodes N` alone (API server, controller and simulated nodes in one process);
 * - `separate`: `preheat apiserver`, `preheat controller` (with the NODE_OPTIONS of
 *   deploy/controller.yaml) and `preheat fleet --nodes N` as three processes.
 * Each cycle creates J ImagePullJobs through the API server's HTTP API (one image each, every
 * node, images no other cycle uses, chosen small so the simulated pulls take about 0.6 s), waits
 * until every job has completed, deletes them all, and waits until they are gone and every
 * NodeImage has no tag left. Then it lets the processes settle (no forced GC: what production
 * runs) and prints, per process, RSS (/proc/PID/status) and V8's heap (process.memoryUsage(),
 * written once a second by a one-line `--import` module, since `preheat dev` and `preheat apiserver`
 * serve no /metrics), and the least RSS seen once a second while settling (V8 gives heap back on
 * its own schedule, so one sample can land on either side of that). Then it asks each process for
 * V8's last-resort collection (the one V8 runs near its heap limit: every page compacted, freed
 * pages given back) and prints RSS and heap once more (`collected_*`): what the process still
 * holds, which a leak makes grow, apart from the free heap V8 keeps until its memory reducer runs
 * (`--trace-gc` shows it: after an ordinary full GC 52 MiB were live in 366 MiB of heap, and a
 * `(reduce)` GC minutes later brought it to 132). At the end `soak_rss_growth_mib{process=...}` =
 * RSS after the last cycle - RSS after the first, `soak_settled_rss_growth_mib` the same of the
 * least RSS and `soak_collected_rss_growth_mib` of the RSS after the collection (issue 24's goal:
 * at most 64). Every wait has a deadline: the run always ends by itself.
 *
 * The fleet is the harness, not what is measured: its nodes may send `--fleet-qps` requests a second
 * each (a shipped daemon's 5 made one cycle of 500 jobs last over 7 minutes: about 4 requests
 * per pull, 500 pulls per node), and pull 10 at a time.
 *
 * `--max-old-space-size` is given to `preheat dev`, the API server and the fleet (the controller
 * keeps its shipped limit); `--heap-snapshots` writes a V8 heap snapshot of each process after
 * each cycle into the run's directory (kept) for looking at what holds memory (writing one takes
 * native memory the process keeps: RSS after a snapshot says little); `--cpu-prof NAME` (dev,
 * apiserver, controller or fleet; may be repeated) writes that process's CPU profile there when it
 * stops, for looking at where a cycle's time goes; `--trace-gc NAME` (may be repeated) writes a line
 * per garbage collection of that process into its log, for seeing when V8 grows or gives back heap.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Result } from "effect"
import { parseImageReference } from "../src/api/imageReference.ts"
import { maxNodeImages } from "../src/api/nodeImage.ts"
import { simulatedImageSize } from "../harness/layers/simulatedRuntime/simulatedNode.ts"
import { eventually } from "../test/support/eventually.ts"
import { freePort } from "../test/support/freePort.ts"
import { statusBytes } from "./procStat.ts"
import { shippedControllerEnv } from "./shippedManifests.ts"

const { values } = parseArgs({
  options: {
    cycles: { type: "string", default: "5" },
    jobs: { type: "string", default: "250" },
    nodes: { type: "string", default: "3" },
    "settle-s": { type: "string", default: "20" },
    "fleet-qps": { type: "string", default: "50" },
    only: { type: "string", default: "" },
    "max-old-space-size": { type: "string", default: "" },
    "heap-snapshots": { type: "boolean", default: false },
    "cpu-prof": { type: "string", multiple: true, default: [] },
    "trace-gc": { type: "string", multiple: true, default: [] },
    keep: { type: "boolean", default: false }
  }
})
const cycles = Number(values.cycles)
const jobs = Number(values.jobs)
const nodes = Number(values.nodes)
const settleMs = Number(values["settle-s"]) * 1000
/** How often a wait looks again: each look lists every job or NodeImage, load the soak keeps low. */
const pollMs = 500
const fleetQps = Number(values["fleet-qps"])
for (const [name, value] of [
  ["cycles", cycles],
  ["jobs", jobs],
  ["nodes", nodes],
  ["settle-s", settleMs],
  ["fleet-qps", fleetQps]
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${String(value)}`)
}
// Every job puts its own image on every node, and a completed job's tags stay until it is deleted:
// past 256 (a NodeImage's most) the rest wait for room that only the cycle's deletions make.
if (jobs > maxNodeImages) {
  throw new Error(`--jobs must be at most ${maxNodeImages} (a NodeImage holds at most ${maxNodeImages} images), got ${jobs}`)
}
if (!["", "dev", "separate"].includes(values.only)) throw new Error(`--only must be dev or separate, got ${values.only}`)
const heapLimit = values["max-old-space-size"] === "" ? [] : [`--max-old-space-size=${Number(values["max-old-space-size"])}`]

const bundle = resolve(import.meta.dirname, "../dist/preheat.mjs")
if (!existsSync(bundle)) throw new Error(`${bundle} is missing: npm run build`)

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))
const mib = (bytes: number) => (bytes / 1048576).toFixed(1)

// Written into the child by `--import`: its heap once a second, to the file its environment names
// (renamed into place, so a reading never sees half a file). When the bench creates `FILE.gc`, the
// next tick first runs V8's last-resort collection (`--expose-gc`'s gc(): every page compacted, as
// when V8 nears its limit) and counts it in `collections`: what the process holds, apart from
// the heap V8 keeps on its own schedule.
// Nothing else in the process changes; the timer is unref'd so it never keeps a process alive.
const heapReporter =
  "data:text/javascript," +
  encodeURIComponent(
    'import{existsSync,renameSync,rmSync,writeFileSync}from"node:fs";const f=process.env.PREHEAT_SOAK_HEAP_FILE;let collections=0;' +
      "if(f)setInterval(()=>{if(existsSync(f+'.gc')){rmSync(f+'.gc');globalThis.gc({type:'major',execution:'sync',flavor:'last-resort'});collections++}" +
      "const m=process.memoryUsage();writeFileSync(f+'.new',JSON.stringify({heapUsed:m.heapUsed,heapTotal:m.heapTotal,external:m.external,arrayBuffers:m.arrayBuffers,collections}));renameSync(f+'.new',f)},1000).unref()"
  )

/** J images per cycle that no other cycle uses, each 20 to 23 MiB (a simulated pull of about 0.6 s). */
const imagesOf = (cycle: number): Array<string> => {
  const chosen: Array<string> = []
  for (let k = 0; chosen.length < jobs; k++) {
    const image = `registry.example.com/soak/c${cycle}-i${k}:v1`
    const reference = parseImageReference(image)
    if (Result.isFailure(reference)) throw reference.failure
    if (simulatedImageSize(reference.success) <= 23 * 1048576) chosen.push(image)
  }
  return chosen
}

interface Process {
  readonly name: string
  readonly child: ChildProcess
  readonly heapFile: string
}

/** One set-up's processes, their logs and its API server. */
class Run {
  readonly dir = mkdtempSync(join(tmpdir(), "preheat-bench-soak-"))
  readonly processes: Array<Process> = []
  server = ""
  private stopping = false

  logOf(name: string): string {
    return join(this.dir, `${name}.log`)
  }

  start(name: string, args: ReadonlyArray<string>, nodeFlags: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): Process {
    const heapFile = join(this.dir, `${name}.heap.json`)
    const diagnostics = values["heap-snapshots"] ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${this.dir}`] : []
    if (values["cpu-prof"].includes(name)) diagnostics.push("--cpu-prof", `--cpu-prof-dir=${this.dir}`)
    if (values["trace-gc"].includes(name)) diagnostics.push("--trace-gc")
    const log = openSync(this.logOf(name), "a")
    const child = spawn(process.execPath, [...nodeFlags, ...diagnostics, "--expose-gc", `--import=${heapReporter}`, bundle, ...args], {
      stdio: ["ignore", log, log],
      env: { ...env, PREHEAT_SOAK_HEAP_FILE: heapFile }
    })
    closeSync(log)
    child.once("exit", (code, signal) => {
      if (!this.stopping) {
        console.error(`${name} exited (${code ?? signal}) during the run; its log:\n${readFileSync(this.logOf(name), "utf8").slice(-4000)}`)
        process.exit(1)
      }
    })
    const started = { name, child, heapFile }
    this.processes.push(started)
    return started
  }

  async stop(keep: boolean): Promise<void> {
    this.stopping = true
    for (const { child } of [...this.processes].reverse()) {
      await new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done()
        child.once("exit", () => done())
        child.kill("SIGTERM")
        setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
      })
    }
    if (!keep) rmSync(this.dir, { recursive: true, force: true })
  }

  /**
   * One API request. A request that got no answer (a connection the server closed as it was
   * reused, a process busy writing a heap snapshot) is sent again, a few times: a create that had
   * arrived then answers 409 and a delete 404, which count as done.
   */
  async call(method: string, path: string, body?: unknown): Promise<any> {
    for (let attempt = 1; ; attempt++) {
      let response: Response
      try {
        response = await fetch(`${this.server}${path}`, {
          method,
          headers: { "content-type": "application/json", accept: "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      } catch (error) {
        if (attempt >= 5) throw error
        await sleep(1000)
        continue
      }
      const text = await response.text()
      const retried = attempt > 1 && ((method === "POST" && response.status === 409) || (method === "DELETE" && response.status === 404))
      if (!response.ok && !retried) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`)
      return JSON.parse(text)
    }
  }
}

/** Runs `each` over `items`, `width` at a time (hundreds of requests at once only measure the client). */
const inBatches = async <A>(items: ReadonlyArray<A>, width: number, each: (item: A) => Promise<unknown>): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < items.length) await each(items[next++] as A)
  }
  await Promise.all(Array.from({ length: width }, worker))
}

const jobsPath = "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs"

// Generous: at least a minute, and 2 s per job and node (the simulated nodes pull 2 at a time).
const phaseTimeoutMs = Math.max(60_000, jobs * nodes * 2000)

/** One cycle: J jobs created, all completed, all deleted, their tags gone. Returns how long each phase took. */
const cycle = async (run: Run, index: number): Promise<string> => {
  const images = imagesOf(index)
  const began = performance.now()
  await inBatches(
    images.map((image, j) => ({ image, j })),
    16,
    ({ image, j }) =>
      run.call("POST", jobsPath, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImagePullJob",
        metadata: { name: `soak-${index}-${j}` },
        spec: { image, parallelism: nodes, completionPolicy: { type: "Always" } }
      })
  )
  await eventually(
    `${jobs} jobs completed`,
    async () => {
      const list = await run.call("GET", jobsPath)
      const done = list.items.filter((job: any) => job.status?.completionTime !== undefined)
      if (done.length < jobs) return undefined
      const failed = done.reduce((sum: number, job: any) => sum + (job.status.failed ?? 0), 0)
      if (failed > 0) throw new Error(`${failed} node pulls failed`)
      return true
    },
    phaseTimeoutMs,
    pollMs
  )
  const completed = performance.now()
  const names: Array<string> = (await run.call("GET", jobsPath)).items.map((job: any) => job.metadata.name)
  await inBatches(names, 16, (name) => run.call("DELETE", `${jobsPath}/${name}`))
  await eventually(
    "the jobs and their tags gone",
    async () => {
      if ((await run.call("GET", jobsPath)).items.length > 0) return undefined
      const nodeImages = (await run.call("GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")).items
      const tags = nodeImages.reduce(
        (sum: number, n: any) => sum + Object.values(n.spec?.images ?? {}).reduce((s: number, i: any) => s + (i.tags?.length ?? 0), 0),
        0
      )
      return tags === 0 ? true : undefined
    },
    phaseTimeoutMs,
    pollMs
  )
  const cleaned = performance.now()
  return `complete_s=${((completed - began) / 1000).toFixed(1)} clean_s=${((cleaned - completed) / 1000).toFixed(1)}`
}

interface Reading {
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  /** Memory outside V8's heap that V8 knows of (Buffers and other ArrayBuffers among it). */
  readonly external: number
  readonly arrayBuffers: number
  /** How many last-resort collections the bench has asked for and the process has run. */
  readonly collections: number
}

const read = (p: Process): Reading => {
  const heap = JSON.parse(readFileSync(p.heapFile, "utf8")) as Omit<Reading, "rss">
  return { rss: statusBytes(p.child.pid!, "VmRSS"), ...heap }
}

/** The process's reading after a last-resort collection, once the freed pages have gone back (2 s). */
const collected = async (p: Process): Promise<Reading> => {
  const before = read(p).collections
  writeFileSync(`${p.heapFile}.gc`, "")
  await eventually(`${p.name}'s collection`, async () => (read(p).collections > before ? true : undefined), 60_000, pollMs)
  await sleep(2000)
  return read(p)
}

const snapshot = async (run: Run, p: Process): Promise<void> => {
  const count = () => readdirSync(run.dir).filter((f) => f.endsWith(".heapsnapshot")).length
  const before = count()
  p.child.kill("SIGUSR2")
  await eventually(`${p.name}'s heap snapshot`, async () => (count() > before ? true : undefined), 300_000, pollMs)
  // The file appears when writing starts: wait until its size stops moving.
  let size = -1
  for (;;) {
    await sleep(2000)
    const now = readdirSync(run.dir)
      .filter((f) => f.endsWith(".heapsnapshot"))
      .reduce((sum, f) => sum + statSync(join(run.dir, f)).size, 0)
    if (now === size) return
    size = now
  }
}

/** The cycles against one set-up; the processes measured are `measured`. */
const soak = async (setup: string, run: Run, measured: ReadonlyArray<Process>): Promise<void> => {
  const first = new Map<string, Reading>()
  const last = new Map<string, Reading>()
  const leastFirst = new Map<string, number>()
  const leastLast = new Map<string, number>()
  const collectedFirst = new Map<string, number>()
  const collectedLast = new Map<string, number>()
  for (let c = 1; c <= cycles; c++) {
    const phases = await cycle(run, c)
    // RSS once a second while settling: V8 gives heap back on its own schedule, so one sample at
    // the end can land before or after it did; the least says what the process settles to.
    const least = new Map(measured.map((p) => [p.name, Number.POSITIVE_INFINITY]))
    for (let waited = 0; waited < settleMs; waited += 1000) {
      await sleep(Math.min(1000, settleMs - waited))
      for (const p of measured) least.set(p.name, Math.min(least.get(p.name)!, statusBytes(p.child.pid!, "VmRSS")))
    }
    for (const p of measured) {
      const reading = read(p)
      if (c === 1) first.set(p.name, reading)
      last.set(p.name, reading)
      leastFirst.set(p.name, leastFirst.get(p.name) ?? least.get(p.name)!)
      leastLast.set(p.name, least.get(p.name)!)
      // After the settled readings, so the collection never shapes them.
      const after = await collected(p)
      collectedFirst.set(p.name, collectedFirst.get(p.name) ?? after.rss)
      collectedLast.set(p.name, after.rss)
      console.log(
        `bench:soak setup=${setup} process=${p.name} cycle=${c} rss_mib=${mib(reading.rss)} settled_rss_mib=${mib(least.get(p.name)!)} heap_used_mib=${mib(reading.heapUsed)} ` +
          `heap_total_mib=${mib(reading.heapTotal)} external_mib=${mib(reading.external)} array_buffers_mib=${mib(reading.arrayBuffers)} ` +
          `collected_rss_mib=${mib(after.rss)} collected_heap_used_mib=${mib(after.heapUsed)} collected_heap_total_mib=${mib(after.heapTotal)} ` +
          `${phases} load=${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(",")}`
      )
    }
    if (values["heap-snapshots"]) for (const p of measured) await snapshot(run, p)
  }
  for (const p of measured) {
    const growth = last.get(p.name)!.rss - first.get(p.name)!.rss
    console.log(`soak_rss_growth_mib{setup="${setup}",process="${p.name}"} ${mib(growth)}`)
    console.log(
      `soak_settled_rss_growth_mib{setup="${setup}",process="${p.name}"} ${mib(leastLast.get(p.name)! - leastFirst.get(p.name)!)}`
    )
    console.log(
      `soak_collected_rss_growth_mib{setup="${setup}",process="${p.name}"} ${mib(collectedLast.get(p.name)! - collectedFirst.get(p.name)!)}`
    )
  }
}

const waitForServer = (run: Run, name: string, pattern: RegExp) =>
  eventually(`${name}'s address`, async () => pattern.exec(readFileSync(run.logOf(name), "utf8"))?.[1], 60_000, pollMs)

const dev = async (run: Run): Promise<void> => {
  const p = run.start("dev", ["dev", "--nodes", String(nodes), "--kubeconfig", join(run.dir, "kubeconfig")], heapLimit)
  run.server = await waitForServer(run, "dev", /API server (http:\/\/\S+),/)
  await eventually(
    "preheat dev ready",
    async () => (readFileSync(run.logOf("dev"), "utf8").includes("Ctrl-C stops") ? true : undefined),
    60_000,
    pollMs
  )
  await eventually(
    "a NodeImage per node",
    async () => ((await run.call("GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")).items.length === nodes ? true : undefined),
    60_000,
    pollMs
  )
  await soak("dev", run, [p])
}

const separate = async (run: Run): Promise<void> => {
  const kubeconfig = join(run.dir, "kubeconfig")
  const apiserver = run.start("apiserver", ["apiserver", "--port", "0", "--kubeconfig-out", kubeconfig], heapLimit)
  run.server = await waitForServer(run, "apiserver", /listening on (http:\/\/\S+)/)
  for (const name of ["preheat-system", "preheat-daemon-config"]) {
    await run.call("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  }
  const fleetPort = await freePort()
  const fleetArgs = ["fleet", "--nodes", String(nodes), "--kubeconfig", kubeconfig, "--metrics-port", String(fleetPort)]
  fleetArgs.push("--kube-api-qps", String(fleetQps), "--kube-api-burst", String(2 * fleetQps), "--max-concurrent-pulls", "10")
  const fleet = run.start("fleet", fleetArgs, heapLimit)
  const controllerPort = await freePort()
  const controller = run.start(
    "controller",
    ["controller", "--kubeconfig", kubeconfig, "--metrics-host", "127.0.0.1", "--metrics-port", String(controllerPort)],
    [],
    { ...process.env, ...shippedControllerEnv() }
  )
  await eventually(
    "a NodeImage per node",
    async () => ((await run.call("GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")).items.length === nodes ? true : undefined),
    120_000,
    pollMs
  )
  await eventually(
    "every daemon synced",
    async () => ((await fetch(`http://127.0.0.1:${fleetPort}/readyz`)).ok ? true : undefined),
    120_000,
    pollMs
  )
  await eventually(
    "the controller leading",
    async () => (/^preheat_leader 1$/m.test(await (await fetch(`http://127.0.0.1:${controllerPort}/metrics`)).text()) ? true : undefined),
    120_000,
    pollMs
  )
  await soak("separate", run, [controller, apiserver, fleet])
}

const main = async () => {
  console.log(
    `bench:soak cycles=${cycles} jobs=${jobs} nodes=${nodes} settle_s=${settleMs / 1000} ${heapLimit.join(" ")} ` +
      `load=${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(",")}`
  )
  for (const [setup, body] of [
    ["dev", dev],
    ["separate", separate]
  ] as const) {
    if (values.only !== "" && values.only !== setup) continue
    const run = new Run()
    const keep = values.keep || values["heap-snapshots"] || values["cpu-prof"].length > 0
    try {
      await body(run)
    } catch (error) {
      await run.stop(true)
      throw new Error(`${setup}: ${error instanceof Error ? error.message : String(error)} (logs: ${run.dir})`)
    }
    await run.stop(keep)
    if (keep) console.log(`${setup} logs: ${run.dir}`)
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
