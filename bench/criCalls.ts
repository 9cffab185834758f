/**
 * npm run bench:cri-calls -- [--calls 300]
 *
 * The round trip of each call a daemon pull can make besides PullImage, against the real
 * containerd of test/e2e/runtime.sh (start it first; PREHEAT_E2E_DIR says where): CRI's
 * ImageStatus, ListImages and ImageFsInfo through the live layer, statfs of the image filesystem,
 * and containerd's images and leases services (what the pull's lease costs). Each call CALLS times
 * one after the other, after 30 unmeasured; median and 90th percentile in ms. The node holds one
 * image of 1 MB (pushed and pulled first), so ListImages is at its cheapest here.
 */
import { statfs } from "node:fs/promises"
import { loadavg } from "node:os"
import { parseArgs } from "node:util"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, ManagedRuntime } from "effect"
import { containerdLeases } from "../layers/cri/live/containerdApi.ts"
import * as CriLive from "../layers/cri/live/criLive.ts"
import { unary } from "../layers/cri/live/grpcCalls.ts"
import { loadServiceConstructors } from "../layers/cri/live/grpcPackages.ts"
import { pullLeaseLabels } from "../layers/cri/live/pullLeases.ts"
import { CriRuntime } from "../src/cri/CriRuntime.ts"
import { readEnvFile } from "../test/e2e/e2eEnv.ts"
import { publishImage } from "../test/support/imageBuilder.ts"

const { values } = parseArgs({ options: { calls: { type: "string", default: "300" } } })
const calls = Number(values.calls)

const env = readEnvFile()
const runtime = ManagedRuntime.make(CriLive.layer({ socket: env.socket }))
const run = <A, E>(effect: Effect.Effect<A, E, CriRuntime>) => runtime.runPromise(effect)
const cri = await run(Effect.service(CriRuntime))
const constructors = loadServiceConstructors()
const target = `unix://${env.socket}`
const imagesClient = new constructors.images(target, grpc.credentials.createInsecure())
const leasesClient = new constructors.leases(target, grpc.credentials.createInsecure())
const leases = containerdLeases(leasesClient)

const image = await publishImage(
  { host: env.registry },
  `bench/cri-calls-${process.pid}`,
  [{ size: 1_000_000, seed: `cri-calls-${process.pid}` }],
  ["v1"]
)
const reference = image.reference()
const imageId = await run(cri.pullImage({ image: reference, timeout: Duration.minutes(1) }))
const mountpoint = (await run(cri.imageFsInfo))[0]?.mountpoint ?? "/"

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN

const time = async (label: string, call: () => Promise<unknown>) => {
  for (let i = 0; i < 30; i++) await call()
  const took: Array<number> = []
  for (let i = 0; i < calls; i++) {
    const started = performance.now()
    await call()
    took.push(performance.now() - started)
  }
  const sorted = took.sort((a, b) => a - b)
  console.log(
    `bench:cri-calls: ${label.padEnd(46)} median ${quantile(sorted, 0.5).toFixed(3)} ms, p90 ${quantile(sorted, 0.9).toFixed(3)} ms`
  )
}

console.log(
  `bench:cri-calls: ${calls} calls each, containerd at ${env.socket}, ${(await run(cri.listImages)).length} image(s) on the node, ` +
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`
)
try {
  await time("CRI ImageStatus, image id", () => run(cri.imageStatus(imageId)))
  await time("CRI ImageStatus, reference (present)", () => run(cri.imageStatus(reference)))
  await time("CRI ImageStatus, reference (absent)", () => run(cri.imageStatus(`${env.registry}/bench/absent:v1`)))
  await time("CRI ListImages", () => run(cri.listImages))
  await time("CRI ImageFsInfo", () => run(cri.imageFsInfo))
  await time("statfs of the image filesystem", () => statfs(mountpoint))
  const byName = { timeout: Duration.seconds(5), namespace: "k8s.io" }
  await time("containerd images List, name==reference", () => run(unary(imagesClient, "List", { filters: [`name==${reference}`] }, byName)))
  let n = 0
  const made: Array<string> = []
  await time("containerd leases Create (a pull's labels)", () => {
    const id = `bench-cri-calls-${process.pid}-${n++}`
    made.push(id)
    return run(leases.create(id, pullLeaseLabels(reference, Date.now())))
  })
  await time("containerd leases Delete", () => run(leases.remove(made.pop() ?? "none").pipe(Effect.ignore)))
  await time("containerd leases ListResources (progress)", () => run(leases.exists("none")))
  for (const id of made) await run(leases.remove(id).pipe(Effect.ignore))
} finally {
  await run(cri.removeImage(reference))
  imagesClient.close()
  leasesClient.close()
  await runtime.dispose()
}
