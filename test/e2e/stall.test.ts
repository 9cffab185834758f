/**
 * `--pull-progress-timeout` on the real containerd (issue 39, part 4), through a proxy before the
 * e2e suite's plain registry (stallingProxy.ts): a registry that stops sending mid-layer fails the
 * attempt with PullStalled and the retry pulls the image; a pull that is slow but moving, and an
 * unpack that takes longer than the timeout, are let finish. The suite also records whether
 * containerd resumed the partial layer on the retry (a Range request) or fetched it again whole.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Duration, Effect, Result } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { pullLeaseLabel } from "../../layers/cri/live/pullLeases.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { resources } from "../../src/kube/resources.ts"
import { buildImage, type LayerSpec, pushImage } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"
import { type StallingProxy, startStallingProxy } from "./stallingProxy.ts"

const run = randomBytes(4).toString("hex")
const MB = 1_000_000

/** `ctr` in CRI's namespace on the suite's containerd. */
const ctr = (socket: string, ...args: ReadonlyArray<string>): string => {
  const result = spawnSync("ctr", ["--address", socket, "--namespace", "k8s.io", ...args], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`ctr ${args.join(" ")}: ${result.stderr}`)
  return result.stdout
}

describeE2e("a registry that stalls, before a real containerd", (e) => {
  let proxy: StallingProxy
  beforeAll(async () => {
    proxy = await startStallingProxy(e.registry)
  })
  // Registered before the daemons' services, so it runs after their afterAll has removed the images.
  afterAll(() => proxy.close())
  const daemons = inProcessDaemons(e, run, { progressInterval: "100 millis" })
  const { exec } = daemons

  /** Pushes an image of these layers to the registry: its layers' digests and sizes, and its name through the proxy. */
  const publish = async (name: string, layers: ReadonlyArray<LayerSpec>) => {
    const content = buildImage(layers)
    const pushed = await pushImage({ host: e.registry }, `e2e/${name}-${run}`, content, ["v1"])
    return { pushed, layers: content.layers, name: `${proxy.host}/${pushed.repository}` }
  }

  /** Runs a daemon with `--pull-progress-timeout` until its one tag has finished: every status seen on the way, and the time taken. */
  const pullWithDaemon = async (name: string, pullProgressTimeout: Duration.Input, pullPolicy: Record<string, number>) => {
    const node = `stall-${run}-${Math.random().toString(36).slice(2, 8)}`
    const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", namespace: "default", name: "stall", uid: `u-${node}` }
    await exec(
      daemons.api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: node },
        spec: { images: { [name]: { tags: [{ tag: "v1", pullPolicy, ownerReferences: [owner] }] } } }
      })
    )
    const seen: Array<ImageTagStatus> = []
    const started = performance.now()
    const options = daemonOptions({ nodeName: node, pullProgressTimeout, progressWriteInterval: "200 millis", pullingWriteDelay: 0 })
    await daemons.withDaemon(options, () =>
      eventually(
        "the pull to finish",
        async () => {
          const status = await daemons.tagStatus(node, name, "v1")
          if (status !== undefined) seen.push(status)
          return status?.phase === "Succeeded" || status?.phase === "Failed" ? status : undefined
        },
        90_000,
        50
      )
    )
    return { seen, seconds: (performance.now() - started) / 1000, messages: [...new Set(seen.map((s) => s.message ?? ""))] }
  }

  it("a layer that stops mid-way fails the attempt with PullStalled, and the retry pulls the image", async () => {
    const { pushed, layers, name } = await publish("stall", [{ size: 8 * MB, seed: `${run}-stall` }])
    const layer = layers[0]!
    proxy.stallBlob(layer.digest, 3 * MB)
    const { seen, messages } = await pullWithDaemon(name, "3 seconds", { backoffLimit: 1, timeoutSeconds: 60 })

    expect(seen.at(-1)).toMatchObject({ phase: "Succeeded", imageID: pushed.imageId })
    // Attempt 1 stalled: its bytes reached, of the image's (config and layer), in the words of the tag's status.
    const retry = messages.find((m) => m.startsWith("attempt 1 of 2 failed: "))
    expect(retry).toMatch(
      /^attempt 1 of 2 failed: pull stalled: no bytes received for 3s, at [\d.]+Mi of 7\.6Mi \(--pull-progress-timeout\); retrying in 1s$/
    )
    const requests = proxy.blobRequests.filter((r) => r.digest === layer.digest)
    expect(requests[0]).toMatchObject({ range: undefined, sent: 3 * MB, end: "stalled" })
    // The retry fetched the rest of the layer only: the attempts share preheat's lease, which kept the partial layer.
    expect(requests).toHaveLength(2)
    const second = requests[1]!
    expect(second).toMatchObject({ range: `bytes=${3 * MB}-`, sent: layer.size - 3 * MB, end: "complete" })
    const resumedFrom = Number(/^bytes=(\d+)-/.exec(second.range ?? "")?.[1] ?? 0)
    console.log(
      `containerd ${resumedFrom > 0 ? `resumed the layer from byte ${resumedFrom} (Range: ${second.range}, ${second.sent} bytes sent)` : `fetched the layer again whole (${second.sent} bytes, no Range)`}; ` +
        `the stalled request had sent ${requests[0]!.sent} bytes; report: ${retry}`
    )
  })

  it("a pull that ends without the image keeps its downloads under preheat's lease; the next pull resumes them and lets the lease go", async () => {
    const { pushed, layers, name } = await publish("lease", [{ size: 6 * MB, seed: `${run}-lease` }])
    const layer = layers[0]!
    const image = `${name}:v1`
    proxy.stallBlob(layer.digest, 2 * MB)
    const pull = (timeout: Duration.Duration) =>
      exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.pullImage({ image, timeout })).pipe(Effect.result))
    const ours = () =>
      ctr(e.socket, "leases", "ls")
        .split("\n")
        .filter((line) => line.includes(`${pullLeaseLabel}=${image}`))

    const cut = await pull(Duration.seconds(3))
    expect(Result.isFailure(cut) && cut.failure._tag).toBe("DeadlineExceeded")
    // containerd collects what no lease holds within moments: the partial layer is still there after a while.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(ours()).toHaveLength(1)
    expect(ctr(e.socket, "content", "active")).toContain(`layer-${layer.digest}`)

    expect(await pull(Duration.seconds(30))).toEqual(Result.succeed(pushed.imageId))
    const requests = proxy.blobRequests.filter((r) => r.digest === layer.digest)
    expect(requests.map((r) => [r.range, r.sent, r.end])).toEqual([
      [undefined, 2 * MB, "stalled"],
      [`bytes=${2 * MB}-`, layer.size - 2 * MB, "complete"]
    ])
    // The image holds its content now; the lease goes (deleted after the pull's answer, not before it).
    await eventually("the pull's lease deleted", () => (ours().length === 0 ? true : undefined), 10_000, 50)
  })

  it("a slow pull whose bytes keep moving is let finish", async () => {
    const { pushed, layers, name } = await publish("trickle", [{ size: 4 * MB, seed: `${run}-trickle` }])
    const layer = layers[0]!
    // 4 MB at 1 MB/s: twice the progress timeout, in steps of 0.1 s.
    proxy.trickleBlob(layer.digest, 1 * MB)
    const { seen, seconds, messages } = await pullWithDaemon(name, "2 seconds", { backoffLimit: 1, timeoutSeconds: 60 })

    expect(seen.at(-1)).toMatchObject({ phase: "Succeeded", imageID: pushed.imageId })
    expect(messages.filter((m) => m.includes("attempt"))).toEqual([])
    expect(proxy.blobRequests.filter((r) => r.digest === layer.digest)).toMatchObject([{ end: "complete" }])
    expect(seconds).toBeGreaterThan(4)
  })

  it("unpacking that takes longer than the progress timeout is no stall", async () => {
    // Small blobs that unpack to 250 MB each: containerd writes and hashes them, one after the other, after the last byte.
    const zeros = [1, 2, 3].map((n) => ({ size: 250 * MB, seed: `${run}-unpack-${n}`, zeros: true }))
    const { pushed, layers, name } = await publish("unpack", zeros)
    const { seen, messages } = await pullWithDaemon(name, "500 millis", { backoffLimit: 1, timeoutSeconds: 120 })
    const ended = Date.now()

    expect(seen.at(-1)).toMatchObject({ phase: "Succeeded", imageID: pushed.imageId })
    expect(messages.filter((m) => m.includes("attempt"))).toEqual([])
    const digests = new Set(layers.map((layer) => layer.digest))
    const requests = proxy.blobRequests.filter((r) => digests.has(r.digest))
    expect(requests.map((r) => r.end)).toEqual(["complete", "complete", "complete"])
    // The test means something only if the pull went on well past its last byte: three timeouts and more.
    const afterLastByte = ended - Math.max(...requests.map((r) => r.completedAt ?? ended))
    expect(afterLastByte).toBeGreaterThan(1_500)
    console.log(`blobs of ${layers.map((l) => l.size).join(", ")} bytes; the pull ended ${afterLastByte} ms after its last byte`)
  })
})
