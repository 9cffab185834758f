/**
 * preheat_node_images_unreported (issue 39) on the built bundle as separate processes: a daemon
 * watches its own Node over HTTP, and its gauge follows what status.images lists (written here
 * with kubectl, as the node's kubelet writes it) of the image its succeeded tag holds.
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
    await cluster.startDaemon("node-1", daemonPort)
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

describe("the daemon's preheat_node_images_unreported", () => {
  it("counts the pulled image while its Node's status.images leaves it out, and not once listed", async () => {
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
      await list(["registry.example.com/big/a:1", "registry.example.com/big/b:1", "registry.example.com/team/small:1"])
      await eventually("the image no longer counted", async () => ((await unreported()) === 0 ? true : undefined), 30_000)
    } catch (error) {
      console.error(cluster.dumpLogs())
      throw error
    }
  }, 120_000)
})
