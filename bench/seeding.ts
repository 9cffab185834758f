/**
 * npm run bench:seeding -- [--nodes 50] [--size 1gi] [--seeds 1] [--keep]
 *
 * Seed-first fan-out (issue 39) against a peer-to-peer mirror. The built bundle (dist/preheat.mjs,
 * built by the npm script first) runs `preheat dev --nodes N --p2p` as a separate process with a
 * kubeconfig of its own: its simulated nodes pull through one mirror, each layer from a node that
 * holds it whole (250 MB/s) or else from the registry (50 MB/s), and the registry counts what it
 * served (harness/cluster/devMirror.ts). Two ImagePullJobs run one after the other over every
 * node, parallelism N, each on an image of its own (so nothing is cached; `bench.example/size-1gi`,
 * 1 GiB in 8 layers): first without seeding, then annotated `preheat.kruise.io/seed-nodes`.
 *
 * Printed per job: the registry's bytes and their ratio to the image's size (the goal:
 * at most 2 with seeding, where every node going to the registry makes N), the peers' bytes, the
 * makespan in simulated pull time (the first pull's start to the last pull's end, as the
 * simulated runtimes clock them: pulls sleep on the clock, so the machine's load only adds the
 * controller's and daemons' reaction times), the wall time from the job's creation to its
 * completion as seen here, and the seeded job's makespan over the unseeded one's (goal: at most
 * 1.5). The load average before and after goes with them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { eventually } from "../test/support/eventually.ts"
import { apiCall } from "./apiCall.ts"

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "50" },
    size: { type: "string", default: "1gi" },
    seeds: { type: "string", default: "1" },
    keep: { type: "boolean", default: false }
  }
})
const nodes = Number(values.nodes)
if (!Number.isInteger(nodes) || nodes < 2) throw new Error(`--nodes must be an integer of at least 2, got ${values.nodes}`)
const sized = /^([1-9][0-9]{0,5})(mi|gi)$/.exec(values.size)
if (sized === null) throw new Error(`--size must be like 1gi or 300mi, got ${values.size}`)
const imageBytes = Number(sized[1]) * 1024 ** (sized[2] === "gi" ? 3 : 2)

const bundle = resolve(import.meta.dirname, "../dist/preheat.mjs")
if (!existsSync(bundle)) throw new Error(`${bundle} is missing: npm run build`)
const dir = mkdtempSync(join(tmpdir(), "preheat-bench-seeding-"))
const log = join(dir, "dev.log")

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

let dev: ChildProcess | undefined
let stopping = false
const stop = () => {
  stopping = true
  dev?.kill("SIGINT")
  if (!values.keep) rmSync(dir, { recursive: true, force: true })
}

interface Served {
  readonly image: string
  readonly registryBytes: number
  readonly peerBytes: number
  readonly pulls: number
  readonly ended: number
  readonly firstStart?: number
  readonly lastEnd?: number
}

const jobsPath = "/apis/apps.kruise.io/v1alpha1/namespaces/default/imagepulljobs"

/** Runs one job over every node and returns what the registry served for its image, and its wall time. */
const runJob = async (server: string, name: string, seeds: string | undefined) => {
  const image = `bench.example/size-${values.size}:${name}-${Date.now()}`
  const started = performance.now()
  await apiCall(server, "POST", jobsPath, {
    apiVersion: "apps.kruise.io/v1alpha1",
    kind: "ImagePullJob",
    metadata: { name, namespace: "default", ...(seeds === undefined ? {} : { annotations: { "preheat.kruise.io/seed-nodes": seeds } }) },
    spec: { image, parallelism: nodes }
  })
  const status = await eventually(
    `job ${name} to complete`,
    async () => {
      const job = await apiCall(server, "GET", `${jobsPath}/${name}`)
      return job.status?.completionTime === undefined ? undefined : job.status
    },
    30 * 60_000,
    100
  )
  const wall = (performance.now() - started) / 1000
  // The counts reach the ConfigMap within a second of the last pull's end.
  const served = await eventually(
    `the registry's counts for ${name}`,
    async () => {
      const data = (await apiCall(server, "GET", "/api/v1/namespaces/default/configmaps/simulated-registry-served")).data
      const found = (JSON.parse(data?.images ?? "[]") as ReadonlyArray<Served>).find((s) => s.image === image)
      const pulls = status.succeeded + status.failed
      return found !== undefined && found.pulls === pulls && found.ended === pulls ? found : undefined
    },
    60_000,
    250
  )
  return { name, image, status, served, wall }
}

const main = async () => {
  const loadBefore = load()
  const output = openSync(log, "a")
  dev = spawn(process.execPath, [bundle, "dev", "--nodes", String(nodes), "--p2p", "--kubeconfig", join(dir, "kubeconfig")], {
    stdio: ["ignore", output, output]
  })
  closeSync(output)
  dev.once("exit", (code, signal) => {
    if (stopping) return
    console.error(`preheat dev exited (${code ?? signal}) during the run; its log:\n${readFileSync(log, "utf8").slice(-4000)}`)
    process.exit(1)
  })
  const server = await eventually(
    "preheat dev's API server",
    () => /API server (http:\/\/\S+),/.exec(readFileSync(log, "utf8"))?.[1],
    120_000
  )
  await eventually("preheat dev ready", () => (readFileSync(log, "utf8").includes("Ctrl-C stops") ? true : undefined), 120_000)
  await eventually(
    "a NodeImage per node",
    async () => ((await apiCall(server, "GET", "/apis/apps.kruise.io/v1alpha1/nodeimages")).items.length === nodes ? true : undefined),
    120_000
  )
  await sleep(2000)
  const runs = [await runJob(server, "unseeded", undefined), await runJob(server, "seeded", values.seeds)]
  const loadAfter = load()
  const makespan = (s: Served) => ((s.lastEnd ?? 0) - (s.firstStart ?? 0)) / 1000
  console.log(`seeding: ${nodes} nodes, image ${values.size} (${imageBytes} bytes), preheat dev --p2p, ${cpus().length} CPUs`)
  for (const { name, served, status, wall } of runs) {
    console.log(
      `seeding_${name} succeeded=${status.succeeded} failed=${status.failed} registry_bytes=${served.registryBytes} ` +
        `registry_ratio=${(served.registryBytes / imageBytes).toFixed(2)} peer_bytes=${served.peerBytes} pulls=${served.pulls} ` +
        `makespan_pulls_s=${makespan(served).toFixed(1)} wall_s=${wall.toFixed(1)}`
    )
  }
  const [plain, seeded] = runs
  console.log(
    `seeding_makespan_ratio=${(makespan(seeded!.served) / makespan(plain!.served)).toFixed(2)} ` +
      `seeding_wall_ratio=${(seeded!.wall / plain!.wall).toFixed(2)} load_before="${loadBefore}" load_after="${loadAfter}"`
  )
}

main()
  .then(stop, (error) => {
    console.error(error)
    stop()
    process.exitCode = 1
  })
  .finally(() => {
    if (values.keep) console.log(`kept ${dir}`)
  })
