/**
 * Upstream's API driven with kubectl against the whole system (issue 11): the controller and the
 * daemons work on jobs written as v1beta1 (upstream's documentation tab), ImageListPullJob status
 * is counted as upstream counts it, and a finished job edited afterwards still satisfies
 * `kubectl wait --for=condition=Complete`; upstream's fake NodeImage is left alone (issue 26).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Cluster } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"

const nodes = ["node-1", "node-2", "node-3"] as const

let cluster: Cluster

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.startNodes(nodes, { "node-type": "xxx" })
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

// Upstream's example selects by names and labels at once, which upstream's webhook refuses.
const example = readFileSync(join(import.meta.dirname, "../upstream/docs-examples/imagepulljob-v1beta1.yaml"), "utf8").replace(
  /\n {4}matchLabels:\n {6}node-type: xxx/,
  ""
)

describe("upstream's API through the whole system", () => {
  it("pulls the documentation's v1beta1 job; edited after it finished, kubectl wait still sees it Complete", async () => {
    expect((await cluster.applyFile("docs-v1beta1", example)).stdout).toBe("imagepulljob.apps.kruise.io/job-with-always created\n")
    await cluster.ok(["wait", "ipj/job-with-always", "--for=condition=Complete", "--timeout=60s"])
    const job = await cluster.getYaml(["ipj", "job-with-always"])
    expect(job.apiVersion).toBe("apps.kruise.io/v1beta1")
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0, active: 0 })

    await cluster.ok(["patch", "ipj", "job-with-always", "--type=merge", "-p", '{"spec":{"parallelism":5}}'])
    expect((await cluster.getYaml(["ipj", "job-with-always"])).metadata.generation).toBe(2)
    // kubectl wait compares status.observedGeneration with metadata.generation.
    await cluster.ok(["wait", "ipj/job-with-always", "--for=condition=Complete", "--timeout=30s"])
    expect((await cluster.getYaml(["ipj", "job-with-always"])).status.observedGeneration).toBe(2)
  })

  it("a v1beta1 Never ImageListPullJob: children succeed and complete, nothing stays active", async () => {
    const list = `apiVersion: apps.kruise.io/v1beta1
kind: ImageListPullJob
metadata:
  name: warm
spec:
  images:
  - nginx:1.9.1
  - busybox:1.29.2
  parallelism: "3"
  completionPolicy:
    type: Never
`
    expect((await cluster.applyFile("never-list", list)).stdout).toBe("imagelistpulljob.apps.kruise.io/warm created\n")
    await cluster.ok(["wait", "iplj/warm", "--for=jsonpath={.status.succeeded}=2", "--timeout=60s"])
    const status = (await cluster.getYaml(["iplj", "warm"])).status
    expect(status).toMatchObject({ desired: 2, active: 0, completed: 2, succeeded: 2 })
    expect(status.completionTime).toBeUndefined()
    const row = (await cluster.ok(["get", "iplj", "warm", "--no-headers"])).trim().split(/\s+/)
    expect(row.slice(0, 4)).toEqual(["warm", "2", "2", "2"])
    // The children, read through the older version, are owned by the list job.
    const children = await cluster.getYaml(["imagepulljobs.v1alpha1.apps.kruise.io"])
    const owned = children.items.filter((c: any) => c.metadata.ownerReferences?.[0]?.name === "warm")
    expect(owned.map((c: any) => [c.apiVersion, c.status.desired, c.status.succeeded])).toEqual([
      ["apps.kruise.io/v1alpha1", 3, 3],
      ["apps.kruise.io/v1alpha1", 3, 3]
    ])
  })

  // Last: while it exists, every job selecting all NodeImages also waits for the fake one.
  it("upstream's fake NodeImage stays without a Node; a job's tag there completes with the status written by hand", async () => {
    // As upstream's e2e framework (test/e2e/framework/v1beta1/nodeimage_util.go) creates it.
    const fake = `apiVersion: apps.kruise.io/v1beta1
kind: NodeImage
metadata:
  name: fake-nodeimage
  labels:
    apps.kruise.io/fake-nodeimage: "true"
`
    expect((await cluster.applyFile("fake-nodeimage", fake)).code).toBe(0)
    const job = `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata:
  name: with-fake
spec:
  image: alpine:3.20
  parallelism: 4
  completionPolicy:
    type: Always
`
    expect((await cluster.applyFile("with-fake", job)).code).toBe(0)
    const version = await eventually("the job's tag on the fake NodeImage", async () => {
      const spec = (await cluster.getYaml(["nodeimage", "fake-nodeimage"])).spec
      return spec?.images?.alpine?.tags?.find((t: { tag: string }) => t.tag === "3.20")?.version as number | undefined
    })
    // What upstream's e2e FailNodeImageFast writes for a node that never answers.
    const failed = {
      status: {
        desired: 1,
        failed: 1,
        imageStatuses: {
          alpine: {
            tags: [
              {
                tag: "3.20",
                phase: "Failed",
                version,
                completionTime: new Date().toISOString(),
                message: "node has not responded for a long time"
              }
            ]
          }
        }
      }
    }
    await cluster.ok(["patch", "nodeimage", "fake-nodeimage", "--subresource=status", "--type=merge", "-p", JSON.stringify(failed)])
    await cluster.ok(["wait", "ipj/with-fake", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    expect((await cluster.getYaml(["ipj", "with-fake"])).status).toMatchObject({ desired: 4, succeeded: 3, failed: 1 })
    expect((await cluster.getYaml(["nodeimage", "fake-nodeimage"])).metadata.labels).toEqual({ "apps.kruise.io/fake-nodeimage": "true" })
    await cluster.ok(["delete", "ipj", "with-fake"])
    await cluster.ok(["delete", "nodeimage", "fake-nodeimage"])
  })
})
