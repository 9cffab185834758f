/**
 * Controller failures with real processes (issue 5, item 3): a controller killed in the middle of
 * a job is replaced and the job finishes with no node pulling twice; of two replicas exactly one
 * leads, and killing it hands over within the lease time.
 */
import { Duration } from "effect"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Cluster, metricSum, type Process, scrape } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

const nodes = ["node-1", "node-2", "node-3"] as const

/**
 * The client-go defaults the controller uses: lease duration 15 s, retry period 2 s. The follower
 * counts the lease duration from when it saw the last renewal (up to a retry period after it), and
 * notices the expiry at a retry.
 */
const handoverLimitMs = 15_000 + 2 * 2_000

/** An image the simulated runtime takes 3 to 4.5 s to pull: long enough to kill the controller mid-job. */
const slowImage = (() => {
  for (let i = 0; i < 1000; i++) {
    const image = `example.com/slow/app:v${i}`
    const ms = Duration.toMillis(simulatedPullTime(image))
    if (ms >= 3_000 && ms <= 4_500) return image
  }
  throw new Error("no slow image among the candidates")
})()

let cluster: Cluster
const daemonPorts: Record<string, number> = {}

const ipjField = (name: string, path: string) => cluster.ok(["get", "ipj", name, "-o", `jsonpath={${path}}`])

const leaseHolder = () =>
  cluster.ok(["get", "lease", "preheat-controller", "-n", "preheat-system", "-o", "jsonpath={.spec.holderIdentity}"])

const leader = async (port: number) => metricSum(await scrape(port), "preheat_leader")

beforeAll(async () => {
  cluster = await Cluster.startWith(startProcesses)
}, 120_000)

const startProcesses = async (cluster: Cluster) => {
  await cluster.createNodes(nodes, {})
  for (const node of nodes) {
    daemonPorts[node] = await freePort()
    await cluster.startDaemon(node, daemonPorts[node])
  }
}

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

describe("controller failures", () => {
  let survivor: { readonly process: Process; readonly port: number }

  it("finishes a job after the controller is killed in the middle of it, with no duplicate pulls", async () => {
    const firstPort = await freePort()
    const first = await cluster.startController("controller-1", firstPort)
    await eventually("controller-1 leading", async () => ((await leader(firstPort)) === 1 ? true : undefined))
    await eventually("a NodeImage per node", async () => {
      const names = (await cluster.ok(["get", "nodeimages", "-o", "name"])).trim().split("\n")
      return names.length === 3 ? names : undefined
    })

    const applied = await cluster.applyFile(
      "slow-job",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: slow-job
spec:
  image: ${slowImage}
  parallelism: 1
  completionPolicy:
    type: Always
`
    )
    expect(applied.code).toBe(0)
    // Mid-job: one node done, the next one pulling.
    await eventually(
      "one node done and one pulling",
      async () => {
        const [succeeded, active] = (await ipjField("slow-job", ".status.succeeded} {.status.active")).split(" ")
        return succeeded === "1" && active === "1" ? true : undefined
      },
      30_000,
      100
    )
    await cluster.kill(first)

    const secondPort = await freePort()
    survivor = { process: await cluster.startController("controller-2", secondPort), port: secondPort }
    await cluster.ok(["wait", "ipj/slow-job", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    expect(await ipjField("slow-job", ".status.succeeded")).toBe("3")
    expect(await ipjField("slow-job", ".status.failed")).toBe("0")
    for (const node of nodes) {
      const pulls = metricSum(await scrape(daemonPorts[node]!), "preheat_pulls_total")
      expect({ node, pulls }).toEqual({ node, pulls: 1 })
    }
  })

  it("runs exactly one leader of two replicas and hands over within the lease time when it is killed", async () => {
    const { process: current, port: currentPort } = survivor
    const otherPort = await freePort()
    const other = await cluster.startController("controller-3", otherPort)

    await eventually("controller-2 holding the lease", async () => ((await leader(currentPort)) === 1 ? true : undefined))
    // Across several retry periods, the new replica stays a follower.
    for (let i = 0; i < 3; i++) {
      expect(await leaseHolder()).toMatch(/^controller-2_/)
      expect([await leader(currentPort), await leader(otherPort)]).toEqual([1, 0])
      await new Promise((done) => setTimeout(done, 1_500))
    }
    // The follower has not reconciled anything (the role logs this line when it starts leading).
    expect(readFileSync(other.logFile, "utf8")).not.toContain("leading: reconciling")
    expect(readFileSync(current.logFile, "utf8")).toContain("leading: reconciling")

    await cluster.kill(current)
    const killedAt = Date.now()
    await eventually("controller-3 leading", async () => ((await leader(otherPort)) === 1 ? true : undefined), handoverLimitMs, 100)
    const handover = Date.now() - killedAt
    expect(handover).toBeLessThanOrEqual(handoverLimitMs)
    expect(await leaseHolder()).toMatch(/^controller-3_/)

    // The new leader reconciles: a new job completes.
    const applied = await cluster.applyFile(
      "after-handover",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: after-handover
spec:
  image: busybox:1.36
  parallelism: 3
  completionPolicy:
    type: Always
`
    )
    expect(applied.code).toBe(0)
    await cluster.ok(["wait", "ipj/after-handover", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    expect(await ipjField("after-handover", ".status.succeeded")).toBe("3")
    console.info(`leader handover took ${handover} ms`)
  })
})
