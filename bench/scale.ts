/**
 * npm run bench:scale -- --nodes N --jobs J --parallelism P [--list] [--node-concurrency C] [--cpu-prof controller,apiserver,fleet]
 *   [--heap-snapshot] [--heap-snapshot-at 0.6] [--trace-gc controller,...] [--controller-node-options="--max-old-space-size=768 --max-semi-space-size=8"] [--keep]
 *
 * The built bundle (dist/preheat.mjs, built by the npm script first) as separate processes, in real
 * time over real HTTP: `preheat apiserver`, `preheat controller` exactly as shipped (live client,
 * leader election, metrics), and `preheat fleet --nodes N` (every simulated daemon in one process,
 * each with its own NodeImage watch and status writes). Once every node has its NodeImage and
 * every daemon has synced, J ImagePullJobs (one image each, all nodes, parallelism P) are
 * created together (with --list: one ImageListPullJob of the J images, whose children they are);
 * the run ends when all have completed.
 *
 * The images are chosen so each simulated pull takes 0.8 to 1.2 s (the simulated runtime's time
 * follows a hash of the reference), and each node may pull J images at once (--node-concurrency C: C), so
 * the ideal makespan is computed: max over the jobs of ceil(N / P) * that image's pull time, and
 * ceil(J / C) * the longest pull time. CPU is read
 * from /proc/PID/stat of each process between the jobs' creation and their completion; the
 * controller's peak RSS is VmHWM from /proc/PID/status; API requests are the controller's and
 * the fleet's own counts (preheat_api_requests_total), between the same two points.
 *
 * Each process's CPU and peak RSS is printed apart (the controller is the product; the API server
 * and the fleet are the harness), and after the run the controller's floor is measured against the
 * same API server under the same load (bench/scaleFloor.ts: a plain node:http patch of a NodeImage
 * of this run, and JSON.parse of it): `controller_cpu_ratio_to_floor` = controller CPU per node and
 * job / (1 x request + 3 x parse).
 *
 * The controller runs with the NODE_OPTIONS of deploy/controller.yaml unless
 * `--controller-node-options` says otherwise (to measure another heap bound). `--heap-snapshot`
 * writes a V8 heap snapshot of the controller into the run's directory once the jobs are done and
 * its peak RSS is read (a snapshot costs the process native memory), before the floor is measured;
 * `--heap-snapshot-at F` writes one while the jobs run, once the fraction F of the node-jobs has
 * succeeded, which is what the controller holds near its peak (bench/heapDiff.ts compares two).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { Duration } from "effect"
import { simulatedPullTime } from "../harness/layers/simulatedRuntime/simulatedNode.ts"
import { eventually } from "../test/support/eventually.ts"
import { freePort } from "../test/support/freePort.ts"
import { measureFloor } from "./scaleFloor.ts"
import { cpuSeconds, statusBytes } from "./procStat.ts"
import { shippedControllerEnv } from "./shippedManifests.ts"
import { apiCall } from "./apiCall.ts"

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "1000" },
    jobs: { type: "string", default: "10" },
    parallelism: { type: "string", default: "100" },
    /** Which processes to profile (--cpu-prof into the run's directory): controller, apiserver, fleet, comma-separated. */
    "cpu-prof": { type: "string", default: "" },
    "heap-snapshot": { type: "boolean", default: false },
    /**
     * A heap snapshot of the controller while the jobs run, once this fraction of the node-jobs has
     * succeeded (0.6: where its RSS peaks), to see what it holds then rather than after the run.
     */
    "heap-snapshot-at": { type: "string" },
    /** Which processes log V8's collections (--trace-gc into their logs, kept in the run's directory). */
    "trace-gc": { type: "string", default: "" },
    "controller-node-options": { type: "string" },
    keep: { type: "boolean", default: false },
    /** The J images as one ImageListPullJob rather than J ImagePullJobs. */
    list: { type: "boolean", default: false },
    /** Each node's --max-concurrent-pulls; default J (every node pulls all its images at once). */
    "node-concurrency": { type: "string" }
  }
})
const nodes = Number(values.nodes)
const jobs = Number(values.jobs)
const parallelism = Number(values.parallelism)
const nodeConcurrency = Number(values["node-concurrency"] ?? jobs)
const snapshotAt = values["heap-snapshot-at"] === undefined ? undefined : Number(values["heap-snapshot-at"])
if (snapshotAt !== undefined && !(snapshotAt > 0 && snapshotAt < 1))
  throw new Error(`--heap-snapshot-at must be a fraction between 0 and 1, got ${values["heap-snapshot-at"]}`)
for (const [name, value] of [
  ["nodes", nodes],
  ["jobs", jobs],
  ["parallelism", parallelism],
  ["node-concurrency", nodeConcurrency]
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${String(value)}`)
}

const bundle = resolve(import.meta.dirname, "../dist/preheat.mjs")
if (!existsSync(bundle)) throw new Error(`${bundle} is missing: npm run build`)
const dir = mkdtempSync(join(tmpdir(), "preheat-bench-scale-"))
const kubeconfig = join(dir, "kubeconfig")

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

const children: Array<ChildProcess> = []
const logOf = (name: string) => join(dir, `${name}.log`)

const start = (name: string, args: ReadonlyArray<string>): ChildProcess => {
  const profiled = values["cpu-prof"].split(",").includes(name)
  const profile = profiled ? [`--cpu-prof`, `--cpu-prof-dir=${join(dir, name)}`] : []
  if (values["trace-gc"].split(",").includes(name)) profile.push("--trace-gc")
  if (name === "controller" && (values["heap-snapshot"] || snapshotAt !== undefined))
    profile.push("--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`)
  const nodeOptions = values["controller-node-options"]
  const controllerEnv = { ...process.env, ...shippedControllerEnv(), ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }) }
  const env = name === "controller" ? controllerEnv : process.env
  // Straight into a file, as a node's container runtime keeps its logs: through a pipe to this
  // process, every line of the fleet's N daemons was a blocking write (5 % of its CPU).
  const log = openSync(logOf(name), "a")
  const child = spawn(process.execPath, [...profile, bundle, ...args], { stdio: ["ignore", log, log], env })
  closeSync(log)
  child.once("exit", (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${code ?? signal}) during the run; its log:\n${readFileSync(logOf(name), "utf8").slice(-4000)}`)
      process.exit(1)
    }
  })
  children.push(child)
  return child
}

let stopping = false
const keepsDir = () =>
  values.keep || values["cpu-prof"] !== "" || values["trace-gc"] !== "" || values["heap-snapshot"] || snapshotAt !== undefined
const stopAll = async () => {
  stopping = true
  // Last started first: the controller and the fleet leave while the API server still answers
  // (releasing the lease, their last writes), so they exit in time to write their profiles.
  for (const child of [...children].reverse()) {
    await new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done()
      child.once("exit", () => done())
      child.kill("SIGTERM")
      setTimeout(() => child.kill("SIGKILL"), 10_000).unref()
    })
  }
  if (!keepsDir()) rmSync(dir, { recursive: true, force: true })
}

let server = ""
const call = (method: string, path: string, body?: unknown): Promise<any> => apiCall(server, method, path, body)

/** preheat_api_requests_total of one process so far, by its labels (verb, kind, result). */
const requestCounts = async (port: number): Promise<Map<string, number>> => {
  const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const counts = new Map<string, number>()
  for (const line of body.split("\n")) {
    if (!line.startsWith("preheat_api_requests_total{") && !line.startsWith("preheat_api_requests_total ")) continue
    const labels = /\{(.*)\}/.exec(line)?.[1] ?? ""
    counts.set(labels, Number(line.slice(line.lastIndexOf(" ") + 1)))
  }
  return counts
}

const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0)

/** What changed between two readings, per label set, largest first. */
const countsSince = (before: Map<string, number>, after: Map<string, number>): Array<[string, number]> =>
  [...after]
    .map(([labels, n]): [string, number] => [labels, n - (before.get(labels) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])

/** J images whose simulated pull takes 0.8 to 1.2 s, the same every run. */
const chooseImages = (): Array<{ image: string; pullMs: number }> => {
  const chosen: Array<{ image: string; pullMs: number }> = []
  for (let k = 0; chosen.length < jobs; k++) {
    const image = `registry.example.com/bench/image-${k}:v1`
    const pullMs = Duration.toMillis(simulatedPullTime(image))
    if (pullMs >= 800 && pullMs <= 1200) chosen.push({ image, pullMs })
  }
  return chosen
}

const main = async () => {
  const apiserver = start("apiserver", ["apiserver", "--port", "0", "--kubeconfig-out", kubeconfig])
  server = await eventually(
    "the API server's address",
    async () => /listening on (http:\/\/\S+)/.exec(readFileSync(logOf("apiserver"), "utf8"))?.[1],
    30_000,
    250
  )
  for (const name of ["preheat-system", "preheat-daemon-config"]) {
    await call("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  }
  const fleetPort = await freePort()
  const fleet = start("fleet", [
    "fleet",
    "--nodes",
    String(nodes),
    "--kubeconfig",
    kubeconfig,
    "--max-concurrent-pulls",
    String(nodeConcurrency),
    "--metrics-port",
    String(fleetPort)
  ])
  const controllerPort = await freePort()
  const controller = start("controller", [
    "controller",
    "--kubeconfig",
    kubeconfig,
    "--metrics-host",
    "127.0.0.1",
    "--metrics-port",
    String(controllerPort)
  ])
  const setupStarted = performance.now()
  await eventually(
    "a NodeImage per node",
    async () => {
      const list = await call("GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")
      return list.items.length === nodes ? true : undefined
    },
    600_000,
    250
  )
  await eventually(
    "every daemon synced",
    async () => ((await fetch(`http://127.0.0.1:${fleetPort}/readyz`)).ok ? true : undefined),
    600_000,
    250
  )
  await eventually(
    "the controller leading",
    async () => {
      const body = await (await fetch(`http://127.0.0.1:${controllerPort}/metrics`)).text()
      return /^preheat_leader 1$/m.test(body) ? true : undefined
    },
    120_000,
    250
  )
  const setupSeconds = (performance.now() - setupStarted) / 1000

  const images = chooseImages()
  const pids = { controller: controller.pid!, apiserver: apiserver.pid!, fleet: fleet.pid! }
  const controllerRssBeforeJobs = statusBytes(controller.pid!, "VmRSS")
  const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]))
  const requestsBefore = { controller: await requestCounts(controllerPort), fleet: await requestCounts(fleetPort) }
  const started = performance.now()
  let snapshotSent = false
  if (values.list) {
    await call("POST", "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagelistpulljobs", {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImageListPullJob",
      metadata: { name: "list" },
      spec: { images: images.map(({ image }) => image), parallelism, completionPolicy: { type: "Always" } }
    })
  } else {
    await Promise.all(
      images.map(({ image }, j) =>
        call("POST", "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs", {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "ImagePullJob",
          metadata: { name: `job-${j}` },
          spec: { image, parallelism, completionPolicy: { type: "Always" } }
        })
      )
    )
  }
  for (;;) {
    // The list job's children are ImagePullJobs too: the run ends when all J have completed.
    const list = await call("GET", "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs")
    const done = list.items.filter((job: any) => job.status?.completionTime !== undefined)
    const succeeded = list.items.reduce((sum: number, job: any) => sum + (job.status?.succeeded ?? 0), 0)
    if (snapshotAt !== undefined && !snapshotSent && succeeded >= snapshotAt * nodes * jobs) {
      // Not awaited: the run goes on (the controller pauses while it writes; its figures show it).
      snapshotSent = true
      console.log(
        `controller heap snapshot at ${succeeded} of ${nodes * jobs} node-jobs succeeded, VmRSS ${Math.round(statusBytes(controller.pid!, "VmRSS") / 1048576)} MiB`
      )
      controller.kill("SIGUSR2")
    }
    if (done.length === jobs) {
      const failed = done.reduce((sum: number, job: any) => sum + (job.status.failed ?? 0), 0)
      if (failed > 0) throw new Error(`${failed} node pulls failed`)
      break
    }
    await sleep(100)
  }
  const makespan = performance.now() - started
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid) - cpuBefore[k]!]))
  const requestsAfter = { controller: await requestCounts(controllerPort), fleet: await requestCounts(fleetPort) }
  const requests = {
    controller: total(requestsAfter.controller) - total(requestsBefore.controller),
    fleet: total(requestsAfter.fleet) - total(requestsBefore.fleet)
  }
  // Each job's waves at its parallelism, and no node pulling more than --node-concurrency at once.
  const ideal = Math.max(
    ...images.map(({ pullMs }) => Math.ceil(nodes / parallelism) * pullMs),
    Math.ceil(jobs / nodeConcurrency) * Math.max(...images.map(({ pullMs }) => pullMs))
  )
  const peakRssMib = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, Math.round(statusBytes(pid, "VmHWM") / 1048576)]))
  // Before the floor is measured: its patches of one NodeImage reach the controller as watch
  // events, hundreds of whole NodeImages it would still hold when the snapshot is written.
  if (values["heap-snapshot"] || snapshotSent) await heapSnapshot(controller, values["heap-snapshot"])
  const nodeJobs = nodes * jobs
  for (const who of ["controller", "fleet"] as const) {
    const mix = countsSince(requestsBefore[who], requestsAfter[who])
      .map(([labels, n]) => `${labels.replaceAll('"', "")}=${(n / nodeJobs).toFixed(2)}`)
      .join(" ")
    console.log(`${who}_requests_per_node_job ${mix}`)
  }
  // The floor, measured now against the same API server under the same load, with a NodeImage
  // of this run (all J tags and their outcomes) as the model.
  const model = (await call("GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")).items[0]
  const floor = await measureFloor(server, model)
  const controllerUs = (cpu["controller"]! * 1e6) / nodeJobs
  console.log(
    `parallelism=${parallelism} setup_s=${setupSeconds.toFixed(1)} makespan_ms=${Math.round(makespan)} ideal_ms=${ideal} ` +
      `pull_ms=${images.map((i) => i.pullMs).join(",")} ` +
      `controller_requests=${requests.controller} fleet_requests=${requests.fleet} ` +
      `controller_rss_before_jobs_mib=${Math.round(controllerRssBeforeJobs / 1048576)}` +
      (keepsDir() ? ` logs=${dir}` : "")
  )
  // Each process apart: the product (the controller) and the harness (the API server standing for
  // a control plane, the fleet for N machines); CPU between the jobs' creation and their end, peak RSS (VmHWM).
  for (const who of ["controller", "apiserver", "fleet"] as const) {
    console.log(
      `${who}_cpu_s=${cpu[who]!.toFixed(1)} ${who}_cpu_us_per_node_job=${Math.round((cpu[who]! * 1e6) / nodeJobs)} ${who}_peak_rss_mib=${peakRssMib[who]}`
    )
  }
  console.log(
    `floor_request_us=${floor.requestUs.toFixed(0)} floor_parse_us=${floor.parseUs.toFixed(1)} ` +
      `floor_us_per_node_job=${floor.usPerNodeJob.toFixed(0)} (1 x request + 3 x parse) ` +
      `controller_cpu_us_per_node_job=${Math.round(controllerUs)} controller_cpu_ratio_to_floor=${(controllerUs / floor.usPerNodeJob).toFixed(2)}`
  )
  console.log(
    [
      `bench:scale nodes=${nodes} jobs=${jobs}${values.list ? " list" : ""}`,
      `makespan_ratio=${(makespan / ideal).toFixed(3)}`,
      `controller_cpu_us_per_node_job=${Math.round(controllerUs)}`,
      `controller_cpu_ratio_to_floor=${(controllerUs / floor.usPerNodeJob).toFixed(2)}`,
      `controller_peak_rss_mib=${peakRssMib["controller"]}`,
      `apiserver_cpu_s=${cpu["apiserver"]!.toFixed(1)}`,
      `apiserver_peak_rss_mib=${peakRssMib["apiserver"]}`,
      `fleet_cpu_s=${cpu["fleet"]!.toFixed(1)}`,
      `fleet_peak_rss_mib=${peakRssMib["fleet"]}`,
      `api_requests_per_node_job=${((requests.controller + requests.fleet) / nodeJobs).toFixed(2)}`
    ].join(" ")
  )
}

/** Has the process write a heap snapshot (--heapsnapshot-signal) and waits until the file is whole. */
const heapSnapshot = async (child: ChildProcess, another: boolean): Promise<void> => {
  const size = () =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".heapsnapshot"))
      .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0)
  if (another) child.kill("SIGUSR2")
  await eventually("the controller's heap snapshot", async () => (size() > 0 ? true : undefined), 300_000, 250)
  // The file appears when writing starts: done once its size stops moving.
  for (let last = -1; size() !== last; ) {
    last = size()
    await sleep(2000)
  }
  console.log(
    `controller heap snapshots: ${readdirSync(dir)
      .filter((f) => f.endsWith(".heapsnapshot"))
      .join(" ")}`
  )
}

main().then(stopAll, async (error) => {
  console.error(error instanceof Error ? error.message : error)
  values.keep = true
  await stopAll()
  console.error(`logs: ${dir}`)
  process.exit(1)
})
