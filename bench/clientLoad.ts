/**
 * The load half of bench/client.ts, run bundled (as the shipped bundles are, with client-node's
 * undici replaced by src/kube/live/undiciOverNodeHttp.ts): K merge patches of one NodeImage through
 * the live KubeApi, and the same through plain node:http, alternately, each measured in this
 * process's own CPU.
 */
import http from "node:http"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { KubeLive } from "../layers/kubeLive.ts"
import { KubeApi } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { Metrics, makeMetrics } from "../src/ops/metrics.ts"

const { values } = parseArgs({
  options: {
    server: { type: "string" },
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
if (address === undefined || kubeconfig === undefined)
  throw new Error("--server and --kubeconfig are required (bench/client.ts passes them)")

const images: Record<string, unknown> = {}
for (let i = 0; i < 10; i++)
  images[`registry.example.com/bench/image-${i}`] = {
    tags: [
      {
        tag: "v1",
        createdAt: "2026-12-03T10:44:27Z",
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
const nodeImage = {
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "NodeImage",
  metadata: { name: "node-1", labels: { "kubernetes.io/hostname": "node-1" } },
  spec: { images }
}
const post = await fetch(`${address}/apis/apps.kruise.io/v1beta1/nodeimages`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(nodeImage)
})
if (!post.ok) throw new Error(await post.text())

const patchOf = (i: number) => ({ metadata: { annotations: { n: String(i) } } })
const path = "/apis/apps.kruise.io/v1beta1/nodeimages/node-1"
const agent = new http.Agent({ keepAlive: true })
const plain = (i: number) =>
  new Promise<void>((done, fail) => {
    const request = http.request(
      `${address}${path}`,
      { method: "PATCH", agent, headers: { "content-type": "application/merge-patch+json", accept: "application/json" } },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (c) => chunks.push(c))
        response.on("end", () => {
          JSON.parse(Buffer.concat(chunks).toString("utf8"))
          response.statusCode === 200 ? done() : fail(new Error(String(response.statusCode)))
        })
      }
    )
    request.once("error", fail)
    request.end(JSON.stringify(patchOf(i)))
  })

const runPlain = async () => {
  let next = 0
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < K) await plain(next++)
    })
  )
}

/** The CPU this process spent on `run`, per request. */
const cpuPer = <E>(run: Effect.Effect<void, E>) =>
  Effect.gen(function* () {
    const start = process.cpuUsage()
    yield* run
    const used = process.cpuUsage(start)
    return (used.user + used.system) / K
  })

const program = Effect.gen(function* () {
  const kube = yield* KubeApi
  let i = 0
  const patchLive = Effect.suspend(() => kube.patch(resources.nodeImage, { name: "node-1" }, patchOf(i++))).pipe(Effect.orDie)
  const live = Effect.forEach(Array.from({ length: K }), () => patchLive, { concurrency: C, discard: true })
  const plainRun = Effect.promise(runPlain)
  // Warm-up: a first connection each way.
  yield* patchLive
  yield* plainRun
  for (let round = 0; round < Number(values.rounds); round++) {
    if (values["only-live"]) {
      console.log(`round ${round}: live_us_per_request=${(yield* cpuPer(live)).toFixed(0)}`)
      continue
    }
    const base = yield* cpuPer(plainRun)
    const ours = yield* cpuPer(live)
    console.log(
      `round ${round}: plain_us_per_request=${base.toFixed(0)} live_us_per_request=${ours.toFixed(0)} ratio=${(ours / base).toFixed(2)}`
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
