/**
 * npm run bench:controller -- --nodes N --jobs J --parallelism P --pull-ms T
 *   [--registries R --max-concurrent-pulls-per-registry C] [--wire]
 *
 * The controller on the in-memory API server against N simulated daemons (a pull takes T ms of
 * simulated time; each daemon writes its status as the shipped daemon does: Pulling once a pull
 * outlives the Pulling delay of 2 s, then the final phase, outcomes of pulls that end close together
 * in one write), J jobs of one image
 * each, all started together, their images spread over R registry hosts (job j on host j mod R).
 * With C, the controller lets at most C nodes pull from one host at once; the ideal makespan is
 * then the larger of a job's own (ceil(N / P) pulls in a row) and a host's (its pulls, C or its
 * jobs' parallelism at a time), and the peak of pulls under way per host (sampled from the
 * simulated daemons at every step) shows the limit held. Time is simulated (TestClock): makespan is what the cluster would
 * see; wall_s and cpu_s are what computing it cost here.
 *
 * The npm script bounds the heap (old space 288 MiB, semi-space 8 MiB) so that peak RSS shows
 * what the run needs rather than how much garbage V8 is allowed to keep: N = 10,000 with J = 100
 * ends at about 130 MiB live. Larger runs need node run directly with a larger
 * --max-old-space-size.
 *
 * With --expose-gc, `controller_heap_kib_per_nodeimage` is the controller's own retained heap (its
 * stores, indexes, books and queues, apart from the API server and the daemons) per NodeImage once
 * the jobs completed: the heap after a full GC with the controller, less the heap after its scope
 * is closed and it is let go. Without `--wire` the controller's stores hold the in-memory server's
 * own objects (shared with its storage), which that difference does not count; with `--wire` every
 * object reaches the controller as a live client gets it, parsed from JSON text (bench/wireKubeApi.ts:
 * `wire_copy_s`, the wall time spent copying, is part of wall_s and cpu_s).
 */
import { Clock, Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import { parseArgs } from "node:util"
import { getHeapStatistics } from "node:v8"
import { InMemoryKubeApi, InMemoryKubeStore } from "../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../layers/scheduler.ts"
import { defaultSettings } from "../src/controller/settings.ts"
import { defaultDaemonOptions } from "../src/daemon/options.ts"
import { statusCadence } from "../src/daemon/statusCadence.ts"
import { makeController } from "../src/controller/controller.ts"
import { apiWriteCount, withApiMetrics } from "../src/kube/instrumentedKubeApi.ts"
import { KubeApi } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { Metrics } from "../src/ops/metrics.ts"
import { registryOf } from "../src/controller/imagePullJob/registryRoom.ts"
import { simulateDaemons } from "../test/support/simulatedDaemons.ts"
import { wireKubeApi } from "./wireKubeApi.ts"

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "1000" },
    jobs: { type: "string", default: "10" },
    parallelism: { type: "string", default: "10" },
    "pull-ms": { type: "string", default: "1000" },
    workers: { type: "string", default: String(defaultSettings.workers) },
    registries: { type: "string", default: "1" },
    "max-concurrent-pulls-per-registry": { type: "string" },
    wire: { type: "boolean", default: false }
  }
})
const nodes = Number(values.nodes)
const jobs = Number(values.jobs)
const parallelism = Number(values.parallelism)
const pullMs = Number(values["pull-ms"])
const registries = Number(values.registries)
const limitFlag = values["max-concurrent-pulls-per-registry"]
const limit = limitFlag === undefined ? undefined : Number(limitFlag)

/** Job j's image: on one host as before, or on host j mod R. */
const imageOf = (j: number) =>
  registries === 1 ? `registry.example.com/bench/image-${j}:v1` : `registry-${j % registries}.example.com/bench/image-${j}:v1`

/** The least makespan any schedule could reach: each job's pulls in a row, each host's at its concurrency. */
const idealMakespan = () => {
  let rounds = Math.ceil(nodes / parallelism)
  for (let r = 0; r < registries; r++) {
    const onHost = Array.from({ length: jobs }, (_, j) => j).filter((j) => j % registries === r).length
    const concurrency = Math.min(limit ?? Infinity, onHost * Math.min(parallelism, nodes))
    if (onHost > 0) rounds = Math.max(rounds, Math.ceil((onHost * nodes) / concurrency))
  }
  return rounds * pullMs
}

let peakRss = process.memoryUsage.rss()
const sampleRss = () => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss())
}

/** Runs every runnable fiber, then moves simulated time on. */
const step = (millis: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow
    yield* TestClock.adjust(millis)
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow
    sampleRss()
    samplePulling()
  })

/** Peak of pulls under way per registry host, from the simulated daemons. */
const peakPulling = new Map<string, number>()
let pulling: () => Iterable<string> = () => []
const samplePulling = () => {
  const now = new Map<string, number>()
  for (const image of pulling()) {
    const host = registryOf(image)
    now.set(host, (now.get(host) ?? 0) + 1)
  }
  for (const [host, count] of now) peakPulling.set(host, Math.max(peakPulling.get(host) ?? 0, count))
}

const program = Effect.gen(function* () {
  const api = yield* KubeApi
  const store = yield* InMemoryKubeStore
  for (let i = 0; i < nodes; i++) {
    yield* api.create(resources.node, {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: `node-${String(i).padStart(5, "0")}`, labels: { "kubernetes.io/hostname": `node-${i}` } },
      status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "1970-01-01T00:00:00Z" }] }
    })
  }
  let reconciles = 0
  const byController = new Map<string, number>()
  // The controller in a scope of its own, so that it can be let go at the end and its heap measured.
  const wire = values.wire ? wireKubeApi(api) : undefined
  const controllerApi = wire?.api ?? api
  const controllerScope = yield* Scope.make()
  // Tells whether the controller was let go in the end: a figure with it still reachable would be wrong.
  let controllerStores: WeakRef<object> | undefined
  yield* Effect.gen(function* () {
    const controller = yield* makeController({
      ...defaultSettings,
      workers: Number(values.workers),
      maxConcurrentPullsPerRegistry: limit
    })
    controllerStores = new WeakRef(controller.stores)
    yield* Effect.forkScoped(
      controller.reconcile((name) => ({
        onFinished: () =>
          Effect.sync(() => {
            reconciles++
            byController.set(name, (byController.get(name) ?? 0) + 1)
          })
      }))
    )
  }).pipe(Scope.provide(controllerScope), Effect.provideService(KubeApi, controllerApi))
  // Status writes as the shipped daemon makes them: a pull within its Pulling delay writes only its
  // outcome, outcomes of pulls ending close together go in one write.
  const daemons = yield* simulateDaemons({ pullMs, countPulls: false, cadence: statusCadence(defaultDaemonOptions) })
  pulling = daemons.pulling
  while ((yield* store.objects(resources.nodeImage)).length < nodes) yield* step(1000)

  const wall = performance.now()
  const cpu = process.cpuUsage()
  const writesBefore = yield* apiWriteCount
  const reconcilesBefore = reconciles
  const start = yield* Clock.currentTimeMillis
  for (let j = 0; j < jobs; j++) {
    yield* api.create(resources.imagePullJob, {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: { name: `job-${j}`, namespace: "default" },
      spec: { image: imageOf(j), parallelism }
    })
  }
  const resolution = Math.max(1, Math.floor(pullMs / 50))
  const completed = () =>
    Effect.map(
      store.objects(resources.imagePullJob),
      (all) => all.filter((j) => (j["status"] as { completionTime?: string } | undefined)?.completionTime !== undefined).length
    )
  while ((yield* completed()) < jobs) yield* step(resolution)
  const makespan = (yield* Clock.currentTimeMillis) - start
  const writes = (yield* apiWriteCount) - writesBefore
  const used = process.cpuUsage(cpu)
  const metrics = yield* Metrics
  const breakdown: Array<string> = []
  for (const kind of ["NodeImage", "NodeImage/status", "ImagePullJob", "ImagePullJob/status", "Event", "Secret"]) {
    for (const verb of ["create", "update", "patch"] as const) {
      const count = yield* metrics.read("preheat_api_requests_total", { verb, kind })
      if (count > 0) breakdown.push(`${verb}:${kind}=${count}`)
    }
  }
  const conflicts = yield* metrics.read("preheat_api_requests_total", { result: "conflict" })
  const ideal = idealMakespan()
  const gc = (globalThis as { gc?: (options?: object) => void }).gc
  // A turn of the event loop and a last-resort collection, as bench/storeMemory.ts found needed
  // for a heap that holds only what is reachable.
  const collect = Effect.promise(() => new Promise((done) => setImmediate(done))).pipe(
    Effect.andThen(Effect.sync(() => gc?.({ type: "major", execution: "sync", flavor: "last-resort" })))
  )
  yield* collect
  const liveHeap = process.memoryUsage().heapUsed
  if (process.env["PREHEAT_BENCH_HEAPSNAPSHOT"] !== undefined) {
    const { writeHeapSnapshot } = yield* Effect.promise(() => import("node:v8"))
    writeHeapSnapshot(process.env["PREHEAT_BENCH_HEAPSNAPSHOT"])
  }
  // The controller let go: every fiber it forked ends with its scope, and nothing here holds it.
  yield* Scope.close(controllerScope, Exit.void)
  for (let i = 0; i < 10; i++) yield* Effect.yieldNow
  yield* collect
  const controllerHeap = liveHeap - process.memoryUsage().heapUsed
  if (gc !== undefined && controllerStores?.deref() !== undefined) throw new Error("the controller is still reachable once let go")
  // And one without it: the difference between the two is the controller's own heap.
  if (process.env["PREHEAT_BENCH_HEAPSNAPSHOT"] !== undefined) {
    const { writeHeapSnapshot } = yield* Effect.promise(() => import("node:v8"))
    writeHeapSnapshot(`${process.env["PREHEAT_BENCH_HEAPSNAPSHOT"]}.without-controller`)
  }
  const line = [
    `bench:controller nodes=${nodes} jobs=${jobs}`,
    ...(limit === undefined
      ? []
      : [
          `registries=${registries} limit_per_registry=${limit}`,
          `peak_pulling_per_registry=${Math.max(0, ...peakPulling.values())}`,
          `makespan_ms=${makespan} ideal_under_limit_ms=${ideal}`
        ]),
    `makespan_ratio=${(makespan / ideal).toFixed(3)}`,
    `writes_per_node_job=${(writes / (nodes * jobs)).toFixed(3)}`,
    `reconciles=${reconciles - reconcilesBefore}`,
    `wall_s=${((performance.now() - wall) / 1000).toFixed(1)}`,
    `cpu_s=${((used.user + used.system) / 1e6).toFixed(1)}`,
    `peak_rss_mib=${Math.round(peakRss / 1048576)}`,
    ...(gc === undefined
      ? []
      : [
          `live_heap_mib=${Math.round(liveHeap / 1048576)}`,
          `controller_heap_kib_per_nodeimage${wire === undefined ? "_unshared" : ""}=${(controllerHeap / 1024 / nodes).toFixed(2)}`
        ]),
    ...(wire === undefined ? [] : [`wire_copy_s=${(wire.copyMs() / 1000).toFixed(1)}`])
  ].join(" ")
  yield* Effect.sync(() =>
    console.log(
      `heap_limit_mib=${Math.round(getHeapStatistics().heap_size_limit / 1048576)} ` +
        `parallelism=${parallelism} pull_ms=${pullMs} makespan_ms=${makespan} ideal_ms=${ideal} writes=${writes} ` +
        `conflicts=${conflicts} (all runs: ${breakdown.join(" ")}) ` +
        `reconciles: ${[...byController].map(([k, v]) => `${k}=${v}`).join(" ")}`
    )
  )
  yield* Effect.sync(() => console.log(line))
})

// One store: the instrumented KubeApi (listed last, so it is the one provided) wraps the same
// in-memory server whose InMemoryKubeStore handle the benchmark reads (layers are shared by reference).
// Without the API server's admission (schemas, CEL rules), which would add its own CPU to this
// process's cpu_s (about 0.1 to 0.3 ms a write of a NodeImage with 1 to 10 images): the benchmark
// measures the controller, and its figures stay comparable with earlier runs.
const server = InMemoryKubeApi.layerWith({
  historyLimit: Number(process.env["PREHEAT_BENCH_HISTORY"] ?? 10_000),
  admission: false
})
const layer = Layer.mergeAll(server, withApiMetrics(server), SchedulerLive.layer(), TestClock.layer()).pipe(
  Layer.provideMerge(Metrics.layerTest)
)
Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
