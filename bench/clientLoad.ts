/**
 * The load half of bench/client.ts, run bundled (as the shipped bundles are, without undici): K
 * merge patches of one NodeImage through the live KubeApi, and the same through plain node:http,
 * alternately, each measured in this process's own CPU; the API server's CPU for the plain
 * patches, against bench/plainServer.ts's for the same patches; and JSON.parse of the NodeImage's
 * text, which every reader pays per version.
 */
import http from "node:http"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { cpuSeconds } from "./procStat.ts"
import { KubeLive } from "../layers/kube/live/kubeLive.ts"
import { KubeApi } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { Metrics, makeMetrics } from "../src/ops/metrics.ts"

const { values } = parseArgs({
  options: {
    server: { type: "string" },
    "server-pid": { type: "string" },
    "plain-server": { type: "string" },
    "plain-server-pid": { type: "string" },
    kubeconfig: { type: "string" },
    requests: { type: "string", default: "4000" },
    concurrency: { type: "string", default: "10" },
    rounds: { type: "string", default: "6" },
    "only-live": { type: "boolean", default: false }
  }
})
const K = Number(values.requests)
const C = Number(values.concurrency)
const address = values.server
const kubeconfig = values.kubeconfig
const plainAddress = values["plain-server"]
const serverPid = Number(values["server-pid"])
const plainServerPid = Number(values["plain-server-pid"])
if (address === undefined || kubeconfig === undefined || plainAddress === undefined || !serverPid || !plainServerPid)
  throw new Error("--server, --server-pid, --plain-server, --plain-server-pid and --kubeconfig are required (bench/client.ts passes them)")

// A NodeImage as bench:scale's have them once ten jobs ran (about 7 KB of JSON): a tag per image
// in the spec and its outcome in the status.
const images: Record<string, unknown> = {}
const imageStatuses: Record<string, unknown> = {}
for (let i = 0; i < 10; i++) {
  const image = `registry.example.com/bench/image-${i}`
  images[image] = {
    tags: [
      {
        tag: "v1",
        createdAt: "2026-12-03T10:44:27Z",
        imagePullPolicy: "Always",
        pullPolicy: { backoffLimit: 3, timeoutSeconds: 600, ttlSecondsAfterFinished: 2160 },
        version: 0,
        ownerReferences: [
          {
            apiVersion: "apps.kruise.io/v1alpha1",
            kind: "ImagePullJob",
            name: `job-${i}`,
            namespace: "default",
            uid: `e6937dbe-08a1-47af-9b19-11b91035b89${i}`
          }
        ]
      }
    ]
  }
  imageStatuses[image] = {
    tags: [
      {
        tag: "v1",
        phase: "Succeeded",
        progress: 100,
        version: 0,
        startTime: "2026-12-03T10:44:28Z",
        completionTime: "2026-12-03T10:44:29Z",
        imageID: `sha256:${String(i).repeat(64)}`
      }
    ]
  }
}
const nodeImage = {
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "NodeImage",
  metadata: { name: "node-1", labels: { "kubernetes.io/hostname": "node-1" } },
  spec: { images }
}
const status = { desired: 10, pulling: 0, waiting: 0, succeeded: 10, failed: 0, imageStatuses }
const collection = "/apis/apps.kruise.io/v1beta1/nodeimages"
for (const server of [address, plainAddress]) {
  const post = await fetch(`${server}${collection}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(nodeImage)
  })
  if (!post.ok) throw new Error(await post.text())
  const reported = await fetch(`${server}${collection}/node-1/status`, {
    method: "PATCH",
    headers: { "content-type": "application/merge-patch+json" },
    body: JSON.stringify({ status })
  })
  if (!reported.ok) throw new Error(await reported.text())
}

const patchOf = (i: number) => ({ metadata: { annotations: { n: String(i) } } })
const path = `${collection}/node-1`
const agent = new http.Agent({ keepAlive: true })
let answerText = ""
const plain = (server: string, i: number) =>
  new Promise<void>((done, fail) => {
    const request = http.request(
      `${server}${path}`,
      { method: "PATCH", agent, headers: { "content-type": "application/merge-patch+json", accept: "application/json" } },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (c) => chunks.push(c))
        response.on("end", () => {
          answerText = Buffer.concat(chunks).toString("utf8")
          JSON.parse(answerText)
          response.statusCode === 200 ? done() : fail(new Error(String(response.statusCode)))
        })
      }
    )
    request.once("error", fail)
    request.end(JSON.stringify(patchOf(i)))
  })

const runPlain = async (server: string) => {
  let next = 0
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < K) await plain(server, next++)
    })
  )
}

/** JSON.parse of the last answer's text (the NodeImage), per parse. */
const parseCost = () => {
  const start = process.cpuUsage()
  for (let i = 0; i < K; i++) JSON.parse(answerText)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / K
}

/** The CPU, in us per request, this process and the server (pid) spent on `run`. */
const cpuPer = <E>(run: Effect.Effect<void, E>, serverPid: number) =>
  Effect.gen(function* () {
    const start = process.cpuUsage()
    const serverStart = cpuSeconds(serverPid)
    yield* run
    const used = process.cpuUsage(start)
    return { client: (used.user + used.system) / K, server: ((cpuSeconds(serverPid) - serverStart) * 1e6) / K }
  })

const program = Effect.gen(function* () {
  const kube = yield* KubeApi
  let i = 0
  const patchLive = Effect.suspend(() => kube.patch(resources.nodeImage, { name: "node-1" }, patchOf(i++))).pipe(Effect.orDie)
  const live = Effect.forEach(Array.from({ length: K }), () => patchLive, { concurrency: C, discard: true })
  const plainRun = Effect.promise(() => runPlain(address))
  const plainServerRun = Effect.promise(() => runPlain(plainAddress))
  // Warm-up: a first connection each way.
  yield* patchLive
  yield* plainRun
  yield* plainServerRun
  console.log(`nodeimage_bytes=${Buffer.byteLength(answerText)}`)
  for (let round = 0; round < Number(values.rounds); round++) {
    if (values["only-live"]) {
      console.log(`round ${round}: live_us_per_request=${(yield* cpuPer(live, serverPid)).client.toFixed(0)}`)
      continue
    }
    const base = yield* cpuPer(plainRun, serverPid)
    const ours = yield* cpuPer(live, serverPid)
    const floor = yield* cpuPer(plainServerRun, plainServerPid)
    console.log(
      `round ${round}: plain_us_per_request=${base.client.toFixed(0)} live_us_per_request=${ours.client.toFixed(0)}` +
        ` ratio=${(ours.client / base.client).toFixed(2)} apiserver_us_per_patch=${base.server.toFixed(0)}` +
        ` plain_server_us_per_patch=${floor.server.toFixed(0)} server_ratio=${(base.server / floor.server).toFixed(2)}` +
        ` parse_us_per_nodeimage=${parseCost().toFixed(1)}`
    )
  }
})

await Effect.runPromise(
  Effect.scoped(program).pipe(
    Effect.provide(KubeLive.layer({ kubeconfig, userAgent: "bench", qps: 1e6, burst: 1_000_000 })),
    Effect.provideService(Metrics, makeMetrics({ processMetrics: false })),
    Effect.orDie
  )
)
