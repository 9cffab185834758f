/**
 * npm run bench:daemon -- [--runs 16] [--busy-size-mb 20] [--sources] [--no-shipped]
 *
 * First the daemon as shipped (bench/shippedDaemon.ts): build.ts's executable run as `preheat
 * daemon` with deploy/daemon.yaml's args and environment against `preheat apiserver`; its idle RSS
 * is shipped_idle_rss_mib. Then the figures below, on a daemon whose KubeApi is this process's.
 *
 * The daemon against a real containerd and registry (start them first: test/e2e/runtime.sh start;
 * PREHEAT_E2E_DIR says where they are). The daemon runs as a child process (KubeApi over IPC from
 * this process's in-memory API server, the live CRI layer), bundled by build.ts's bundleTo as
 * dist/preheat.mjs is unless --sources, with the environment deploy/daemon.yaml gives the daemon
 * container (NODE_OPTIONS, MALLOC_MMAP_THRESHOLD_), so its memory is its own. It is not the whole
 * `preheat daemon`: no client-node and no other roles' code (docs/benchmarks.md has both).
 *
 * For a 50 MB and a 200 MB image, RUNS times each, alternating which goes first, with the image
 * removed from the node before every pull:
 * - direct: one CRI PullImage call from this process;
 * - daemon: the time from writing the tag (a new version, IfNotPresent) to seeing Succeeded in its
 *   status through a watch.
 * overhead_ratio is the median over all runs (both sizes) of daemon / direct of the same run; also
 * shown, per size and over both, the ratio of medians (median daemon / median direct). Also shown: the daemon's own
 * round trip for an image the node has (IfNotPresent: write, watch, ImageStatus, status write).
 * daemon_cpu_ms_per_pull: the daemon process's CPU time (user + system) over the paired runs, per
 * pull it made: its own cost, which the machine's load moves far less than the wall-clock ratio.
 * idle_rss_mib: the daemon running with an empty NodeImage; busy_rss_mib: its peak while 10 tags
 * (distinct images) pull at once. The last line is machine-readable.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { Duration, Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as grpc from "@grpc/grpc-js"
import { bundleTo, exePath } from "../build.ts"
import { containerdLeases } from "../layers/cri/live/containerdApi.ts"
import { loadServiceConstructors } from "../layers/cri/live/grpcPackages.ts"
import { pullLeaseLabel } from "../layers/cri/live/pullLeases.ts"
import * as CriLive from "../layers/cri/live/criLive.ts"
import { InMemoryKubeApi } from "../harness/layers/inMemoryKubeApi.ts"
import type { ImageTagStatus } from "../src/api/nodeImage.ts"
import { CriRuntime } from "../src/cri/CriRuntime.ts"
import { KubeApi, type KubeObject } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { daemonChildSource, type DaemonProcess, startDaemonProcess } from "../test/daemon/support/daemonProcess.ts"
import { envFilePath, readEnvFile } from "../test/e2e/e2eEnv.ts"
import { publishImage, type PushedImage } from "../test/support/imageBuilder.ts"
import { daemonSetEnv, measureShippedIdle } from "./shippedDaemon.ts"

const { values } = parseArgs({
  allowNegative: true,
  options: {
    runs: { type: "string", default: "16" },
    "busy-size-mb": { type: "string", default: "20" },
    sources: { type: "boolean", default: false },
    // --no-shipped skips building and measuring dist/preheat (the result line then says NaN).
    shipped: { type: "boolean", default: true }
  }
})
const runs = Number(values.runs)
const busySize = Number(values["busy-size-mb"]) * 1_000_000
const MB = 1_000_000
const MiB = 1024 * 1024

const fail = (message: string): never => {
  console.error(`bench:daemon: ${message}`)
  process.exit(1)
}

if (!existsSync(envFilePath())) fail(`no runtime: ${envFilePath()} is missing (start one with test/e2e/runtime.sh start)`)
const env = readEnvFile()
const node = `bench-${process.pid}`
const tag = (version: number, tagName: string) => ({ tag: tagName, version, imagePullPolicy: "IfNotPresent" })

const runtime = ManagedRuntime.make(Layer.mergeAll(InMemoryKubeApi.layer, CriLive.layer({ socket: env.socket })))
const exec = <A, E>(effect: Effect.Effect<A, E, KubeApi | CriRuntime>) => runtime.runPromise(effect)
const api = await exec(Effect.service(KubeApi))
const cri = await exec(Effect.service(CriRuntime))

/** Clock ticks per second of /proc's CPU times (USER_HZ). */
const clockTicks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100

/** A process's CPU time so far, user and system, in milliseconds (/proc/PID/stat fields 14 and 15). */
const cpuMillisOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const statusOf = (object: KubeObject, image: string, tagName: string): ImageTagStatus | undefined =>
  (object["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<ImageTagStatus> }> } | undefined)?.imageStatuses?.[
    image
  ]?.tags.find((t) => t.tag === tagName)

/** Writes spec.images and resolves, through a watch, once `done` holds for the stored object. */
const writeAndWait = async (images: Record<string, unknown>, done: (object: KubeObject) => boolean): Promise<number> => {
  const current = await exec(api.get(resources.nodeImage, { name: node }))
  const started = performance.now()
  const written = await exec(api.update(resources.nodeImage, { ...current, spec: { images } }))
  if (done(written)) return performance.now() - started
  await exec(
    api
      .watch(resources.nodeImage, { fieldSelector: `metadata.name=${node}`, resourceVersion: written.metadata.resourceVersion ?? "0" })
      .pipe(
        Stream.filter((event) => event.type !== "BOOKMARK" && event.type !== "DELETED" && done(event.object)),
        Stream.take(1),
        Stream.runDrain,
        Effect.timeout(Duration.minutes(10))
      )
  )
  return performance.now() - started
}

const remove = (image: PushedImage) => exec(cri.removeImage(image.reference()))

/**
 * containerd's lease API on the runtime's socket. The daemon deletes a pulled image's lease after
 * reporting Succeeded; removing the image before that leaves its content in the store until
 * containerd's next garbage collection, and the next pull would find it.
 */
const leaseApi = containerdLeases(new (loadServiceConstructors().leases)(`unix://${env.socket}`, grpc.credentials.createInsecure()))
// Only the leases of this run's images: the e2e runtime keeps the leases of other runs' failed pulls
// (kept for a retry to resume, until their expiry), which no pull here will delete.
const daemonLeasesGone = async (images: ReadonlyArray<PushedImage>): Promise<void> => {
  const deadline = performance.now() + 10_000
  const ours = (pulled: string | undefined) =>
    pulled !== undefined &&
    images.some(
      (image) => pulled.startsWith(`${env.registry}/${image.repository}:`) || pulled.startsWith(`${env.registry}/${image.repository}@`)
    )
  while ((await exec(leaseApi.list)).some((lease) => ours(lease.labels[pullLeaseLabel]))) {
    if (performance.now() > deadline) fail("the daemon's pull leases were not deleted within 10 s")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A bundle of the child as dist/preheat.mjs is built: one minified ESM file, nothing resolved at run time. */
const bundleChild = async (dir: string): Promise<string> => {
  const outfile = join(dir, "daemon-child.mjs")
  await bundleTo(daemonChildSource, outfile, "esm")
  return outfile
}

const dir = mkdtempSync(join(tmpdir(), "preheat-bench-daemon-"))
let daemon: DaemonProcess | undefined
try {
  // The shipped daemon first, on a quiet runtime; build.ts makes the executable from the current
  // sources as build/image.ts puts it in the image.
  let shippedIdle = Number.NaN
  if (values.shipped) {
    const built = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", "build.ts", "bin"], {
      cwd: join(import.meta.dirname, ".."),
      stdio: ["ignore", "ignore", "inherit"]
    })
    if (built.status !== 0) fail(`build.ts bin failed (${built.status ?? built.signal})`)
    const shipped = await measureShippedIdle({ executable: exePath, dir, socket: env.socket, nodeName: `${node}-shipped` })
    shippedIdle = shipped.idleRssMiB
    console.log(`bench:daemon: shipped daemon idle ${shippedIdle.toFixed(1)} MiB: ${shipped.command}`)
  }

  const run = String(process.pid)
  const registry = { host: env.registry }
  console.log(`bench:daemon: building and pushing test images to ${env.registry} ...`)
  const sized = [
    { label: "50MB", image: await publishImage(registry, `bench/daemon-50-${run}`, [{ size: 50 * MB, seed: `bench-${run}-50` }], ["v1"]) },
    {
      label: "200MB",
      image: await publishImage(
        registry,
        `bench/daemon-200-${run}`,
        [
          { size: 100 * MB, seed: `bench-${run}-200a` },
          { size: 100 * MB, seed: `bench-${run}-200b` }
        ],
        ["v1"]
      )
    }
  ]
  const busyImages: Array<PushedImage> = []
  for (let i = 0; i < 10; i++) {
    busyImages.push(
      await publishImage(registry, `bench/daemon-busy-${i}-${run}`, [{ size: busySize, seed: `bench-${run}-busy-${i}` }], ["v1"])
    )
  }

  await exec(
    api.create(resources.nodeImage, { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: node }, spec: {} })
  )
  const entry = values.sources ? undefined : await bundleChild(dir)
  const childEnv = daemonSetEnv()
  daemon = await startDaemonProcess(
    api,
    {
      daemon: { nodeName: node, maxConcurrentPulls: 10 },
      socket: env.socket
    },
    { ...(entry === undefined ? {} : { entry }), env: childEnv }
  )
  const child = daemon

  // Idle: started, synced, nothing to do; let start-up garbage settle first.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  const idleSamples: Array<number> = []
  for (let i = 0; i < 10; i++) {
    idleSamples.push(child.rssBytes())
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const idleRss = median(idleSamples) / MiB

  const ratios: Array<number> = []
  const medians: Array<{ readonly direct: number; readonly daemon: number }> = []
  let version = 0

  // The daemon's fixed cost: a tag whose image the node already has.
  const presentImage = sized[0]!.image
  const presentName = `${env.registry}/${presentImage.repository}`
  await exec(cri.pullImage({ image: presentImage.reference(), timeout: Duration.minutes(10) }))
  const roundTrips: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const v = ++version
    roundTrips.push(
      await writeAndWait({ [presentName]: { tags: [tag(v, "v1")] } }, (object) => {
        const status = statusOf(object, presentName, "v1")
        return status?.version === v && status.phase === "Succeeded"
      })
    )
  }
  console.log(
    `bench:daemon: present image (IfNotPresent): tag written to Succeeded seen, median ${median(roundTrips).toFixed(1)} ms ` +
      `[${roundTrips.map((t) => t.toFixed(1)).join(", ")}]`
  )
  const cpuBefore = cpuMillisOf(child.pid)
  for (const { label, image } of sized) {
    const name = `${env.registry}/${image.repository}`
    const direct: Array<number> = []
    const viaDaemon: Array<number> = []
    await remove(image)
    for (let i = 0; i < runs; i++) {
      const pullDirect = async () => {
        const started = performance.now()
        await exec(cri.pullImage({ image: image.reference(), timeout: Duration.minutes(10) }))
        direct.push(performance.now() - started)
        await remove(image)
      }
      const pullDaemon = async () => {
        const v = ++version
        viaDaemon.push(
          await writeAndWait({ [name]: { tags: [tag(v, "v1")] } }, (object) => {
            const status = statusOf(object, name, "v1")
            if (status?.version === v && status.phase === "Failed") throw new Error(`daemon pull failed: ${status.message}`)
            return status?.version === v && status.phase === "Succeeded"
          })
        )
        await daemonLeasesGone([image])
        await remove(image)
      }
      if (i % 2 === 0) {
        await pullDirect()
        await pullDaemon()
      } else {
        await pullDaemon()
        await pullDirect()
      }
      ratios.push(viaDaemon.at(-1)! / direct.at(-1)!)
    }
    const own = ratios.slice(-runs)
    medians.push({ direct: median(direct), daemon: median(viaDaemon) })
    console.log(
      `bench:daemon: ${label}: median of ratios ${median(own).toFixed(3)}; direct median ${median(direct).toFixed(0)} ms [${direct.map((t) => t.toFixed(0)).join(", ")}], ` +
        `daemon median ${median(viaDaemon).toFixed(0)} ms [${viaDaemon.map((t) => t.toFixed(0)).join(", ")}], ` +
        `ratio of medians ${(median(viaDaemon) / median(direct)).toFixed(3)}`
    )
  }

  const cpuPerPull = (cpuMillisOf(child.pid) - cpuBefore) / ratios.length
  console.log(`bench:daemon: daemon CPU (user + system) over the paired runs: ${cpuPerPull.toFixed(1)} ms per pull`)

  // Busy: ten tags at once, the RSS sampled every 20 ms until all have succeeded.
  let peak = child.rssBytes()
  const sampler = setInterval(() => {
    peak = Math.max(peak, child.rssBytes())
  }, 20)
  const busyImagesSpec = Object.fromEntries(busyImages.map((image) => [`${env.registry}/${image.repository}`, { tags: [tag(0, "v1")] }]))
  const busyMillis = await writeAndWait(busyImagesSpec, (object) =>
    busyImages.every((image) => statusOf(object, `${env.registry}/${image.repository}`, "v1")?.phase === "Succeeded")
  )
  clearInterval(sampler)
  peak = Math.max(peak, child.rssBytes())
  const busyRss = peak / MiB
  const afterRss = child.rssBytes() / MiB
  console.log(
    `bench:daemon: 10 concurrent pulls of ${busySize / MB} MB took ${busyMillis.toFixed(0)} ms; ` +
      `RSS idle ${idleRss.toFixed(1)} MiB, peak ${busyRss.toFixed(1)} MiB, after ${afterRss.toFixed(1)} MiB ` +
      `(${entry === undefined ? "TypeScript sources" : "esbuild bundle"}, ` +
      `${Object.entries(childEnv)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(" ")}, Node ${process.versions.node}, ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")})`
  )
  await daemonLeasesGone(busyImages)
  for (const image of busyImages) await remove(image)

  const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
  const sorted = [...ratios].sort((a, b) => a - b)
  console.log(
    `bench:daemon: overhead: median of ${ratios.length} paired ratios ${median(ratios).toFixed(3)} ` +
      `(quartiles ${median(sorted.slice(0, sorted.length >> 1)).toFixed(3)}-${median(sorted.slice((sorted.length + 1) >> 1)).toFixed(3)}); ` +
      `ratio of medians over both sizes ${(sum(medians.map((m) => m.daemon)) / sum(medians.map((m) => m.direct))).toFixed(3)}`
  )
  console.log(
    `bench:daemon overhead_ratio=${median(ratios).toFixed(3)} daemon_cpu_ms_per_pull=${cpuPerPull.toFixed(1)} idle_rss_mib=${idleRss.toFixed(1)} ` +
      `busy_rss_mib=${busyRss.toFixed(1)} shipped_idle_rss_mib=${shippedIdle.toFixed(1)}`
  )
} finally {
  await daemon?.stop()
  await runtime.dispose()
  rmSync(dir, { recursive: true, force: true })
}
