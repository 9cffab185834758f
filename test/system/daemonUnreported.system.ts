/**
 * Images the scheduler cannot see (issue 39) on the built bundle as separate processes: a daemon
 * told its kubelet lists 3 images (`--node-status-max-images 3`) and given 20 s to list a pulled one (`--unreported-grace 20s`) watches its own Node over HTTP,
 * and as status.images (written here with kubectl, as the node's kubelet writes it) leaves out the
 * image its succeeded tag holds, its gauge counts it, it marks the tag `unreported` once the pull
 * is 20 s old, and the controller, which reads the marks and no Node's list, gives the job
 * ImageUnreported with one Warning; listed, the count, the mark and the condition go.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"
import { Cluster, metricSum, scrape } from "./cluster.ts"

let cluster: Cluster
let daemonPort = 0

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.createNodes(["node-1"], {})
    await cluster.startController("controller", await freePort())
    daemonPort = await freePort()
    await cluster.startDaemon("node-1", daemonPort, undefined, ["--node-status-max-images", "3", "--unreported-grace", "20s"])
  })
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

const job = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: small, namespace: default}
spec:
  image: registry.example.com/team/small:1
  completionPolicy: {type: Never}
`

/** What the node's kubelet would list: these names, one image each. */
const list = (names: ReadonlyArray<string>) =>
  cluster.ok([
    "patch",
    "node",
    "node-1",
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: { images: names.map((name, i) => ({ names: [name], sizeBytes: 1_000_000_000 - i })) } })
  ])

const unreported = async () => metricSum(await scrape(daemonPort), "preheat_node_images_unreported")
/** The small tag's `unreported` in node-1's NodeImage status, as kubectl shows it. */
const mark = async (): Promise<boolean | undefined> => {
  const nodeImage = JSON.parse(await cluster.ok(["get", "nodeimage", "node-1", "-o", "json"]))
  return nodeImage.status?.imageStatuses?.["registry.example.com/team/small"]?.tags?.[0]?.unreported
}
const condition = async () => {
  const conditions: ReadonlyArray<{ type: string; status: string; message?: string }> = JSON.parse(
    (await cluster.ok(["get", "ipj", "small", "-o", "jsonpath={.status.conditions}"])) || "[]"
  )
  return conditions.find((c) => c.type === "ImageUnreported")
}
const warnings = async () =>
  JSON.parse(await cluster.ok(["get", "events", "--field-selector", "reason=ImageUnreported,involvedObject.name=small", "-o", "json"]))
    .items as ReadonlyArray<{ type: string; message: string }>

describe("a daemon's Node that leaves its image out of status.images", () => {
  it("counted by the daemon's gauge at once, the tag marked after its grace, the job's condition; all gone once listed", async () => {
    try {
      await cluster.applyFile("small", job)
      await eventually(
        "the image pulled",
        async () => ((await cluster.ok(["get", "ipj", "small", "-o", "jsonpath={.status.succeeded}"])) === "1" ? true : undefined),
        60_000
      )
      // No list yet: nothing to judge by.
      expect(await unreported()).toBe(0)
      await list(["registry.example.com/big/a:1", "registry.example.com/big/b:1", "registry.example.com/big/c:1"])
      await eventually("the image counted", async () => ((await unreported()) === 1 ? true : undefined), 30_000)
      // The kubelet may be late yet: no mark, no condition before the grace is over.
      expect(await mark()).toBeUndefined()
      expect(await condition()).toBeUndefined()
      await eventually("the tag marked", async () => ((await mark()) === true ? true : undefined), 60_000, 500)
      const held = await eventually("the job's condition", async () => {
        const found = await condition()
        return found?.status === "True" ? found : undefined
      })
      expect(held.message).toContain('"registry.example.com/team/small:1" is on node-1 but its Node status.images leaves it out')
      expect(await warnings()).toEqual([
        expect.objectContaining({ type: "Warning", message: expect.stringContaining("is on 1 node (node-1)") })
      ])
      await list(["registry.example.com/big/a:1", "registry.example.com/big/b:1", "registry.example.com/team/small:1"])
      await eventually("the image no longer counted", async () => ((await unreported()) === 0 ? true : undefined), 30_000)
      await eventually("the mark gone", async () => ((await mark()) === undefined ? true : undefined), 30_000)
      await eventually("the condition False", async () => ((await condition())?.status === "False" ? true : undefined), 30_000)
      expect(await warnings()).toHaveLength(1)
    } catch (error) {
      console.error(cluster.dumpLogs())
      throw error
    }
  }, 300_000)
})
