/**
 * Registry protection (issue 15, part 4) with real processes: the built controller started with
 * `--max-concurrent-pulls-per-registry 1`, three daemons on the simulated runtime, jobs applied
 * with kubectl. Sampled through kubectl, never more than one node pulls from docker.io at once; the
 * held-back job says why in `kubectl get ipj` and in `preheat status`; a job on another registry
 * is not held up; every job completes.
 */
import { Duration } from "effect"
import { execFile } from "node:child_process"
import { resolve } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { registryOf } from "../../src/controller/imagePullJob/registryRoom.ts"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Cluster } from "./cluster.ts"

const nodes = ["node-1", "node-2", "node-3"] as const
const bundle = resolve(import.meta.dirname, "../../dist/preheat.mjs")

/** An image of `repository` the simulated runtime takes between 1.5 and 3 s to pull. */
const pullOfAboutTwoSeconds = (repository: string) => {
  for (let i = 0; i < 1000; i++) {
    const image = `${repository}:v${i}`
    const ms = Duration.toMillis(simulatedPullTime(image))
    if (ms >= 1_500 && ms <= 3_000) return image
  }
  throw new Error(`no image of ${repository} with a pull of about 2 s`)
}

const hubA = pullOfAboutTwoSeconds("limited/first")
const hubB = pullOfAboutTwoSeconds("limited/second")
const quay = pullOfAboutTwoSeconds("quay.io/other/app")

const jobManifest = (name: string, image: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
spec:
  image: ${image}
  parallelism: 3
  completionPolicy:
    type: Always
`

let cluster: Cluster

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.startNodes(nodes, {}, ["--max-concurrent-pulls-per-registry", "1"])
  })
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

/** Nodes pulling per registry as kubectl shows the NodeImages: a job's tag not yet final for its version. */
const pullingByRegistry = async (): Promise<Map<string, number>> => {
  const list = JSON.parse(await cluster.ok(["get", "nodeimages", "-o", "json"])) as {
    items: Array<{
      spec?: { images?: Record<string, { tags: Array<{ tag: string; version?: number; ownerReferences?: Array<unknown> }> }> }
      status?: { imageStatuses?: Record<string, { tags: Array<{ tag: string; version?: number; phase: string }> }> }
    }>
  }
  const counts = new Map<string, number>()
  for (const node of list.items) {
    for (const [image, entry] of Object.entries(node.spec?.images ?? {})) {
      for (const tag of entry.tags) {
        if ((tag.ownerReferences ?? []).length === 0) continue
        const reported = node.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === (tag.version ?? 0))
        if (reported?.phase === "Succeeded" || reported?.phase === "Failed") continue
        counts.set(registryOf(image), (counts.get(registryOf(image)) ?? 0) + 1)
      }
    }
  }
  return counts
}

const statusView = () =>
  new Promise<string>((done, fail) =>
    execFile(process.execPath, [bundle, "status", "--kubeconfig", cluster.kubeconfig], (error, stdout, stderr) =>
      error === null ? done(stdout) : fail(new Error(`preheat status: ${stderr}`))
    )
  )

const completed = async (name: string) => (await cluster.ok(["get", "ipj", name, "-o", "jsonpath={.status.completionTime}"])) !== ""

describe("--max-concurrent-pulls-per-registry", () => {
  it("keeps docker.io to one node pulling across jobs, says who waits, and leaves quay.io alone", async () => {
    for (const [name, image] of [
      ["hub-a", hubA],
      ["hub-b", hubB],
      ["quay", quay]
    ] as const) {
      const applied = await cluster.applyFile(name, jobManifest(name, image))
      expect(applied.stderr).toBe("")
    }
    let peakHub = 0
    let waitingMessage = ""
    let statusLines = ""
    let quayDoneWhileHubRunning = false
    const deadline = Date.now() + 80_000
    for (;;) {
      const counts = await pullingByRegistry()
      peakHub = Math.max(peakHub, counts.get("docker.io") ?? 0)
      const messages = await cluster.ok(["get", "ipj", "-o", 'jsonpath={range .items[*]}{.status.message}{"\\n"}{end}'])
      const waiting = messages.split("\n").find((m) => m.includes("waiting for registry docker.io (limit 1)"))
      if (waiting !== undefined && waitingMessage === "") {
        waitingMessage = waiting
        statusLines = await statusView()
      }
      const done = await Promise.all(["hub-a", "hub-b", "quay"].map(completed))
      if (done[2] && !(done[0] && done[1])) quayDoneWhileHubRunning = true
      if (done.every(Boolean)) break
      if (Date.now() > deadline) throw new Error(`jobs not done: ${JSON.stringify(done)}`)
    }
    expect(peakHub).toBe(1)
    expect(waitingMessage).toMatch(/^job is running, progress \d+\.\d%, [1-3] nodes? waiting for registry docker\.io \(limit 1\)$/)
    expect(statusLines).toContain("waiting for registry docker.io (limit 1)")
    // Six docker.io pulls of about 2 s one after another, against one round on quay.io.
    expect(quayDoneWhileHubRunning).toBe(true)
    for (const name of ["hub-a", "hub-b", "quay"]) {
      expect(await cluster.ok(["get", "ipj", name, "-o", "jsonpath={.status.succeeded} {.status.message}"])).toBe("3 job has completed")
    }
  })
})
