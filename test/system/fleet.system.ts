/**
 * `preheat fleet` (issue 12): many simulated nodes in one process against a real API server and
 * controller, as bench:scale runs them. Each node registers itself as a Ready Node, gets its
 * NodeImage from the controller and pulls through its own daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Cluster } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

let cluster: Cluster
let fleetPort = 0

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.startController("controller", await freePort())
    fleetPort = await freePort()
    const fleet = cluster.spawn("fleet", ["fleet", "--nodes", "4", "--kubeconfig", cluster.kubeconfig, "--metrics-port", String(fleetPort)])
    await eventually(
      "every node of the fleet synced",
      async () => {
        if (fleet.child.exitCode !== null) throw new Error(`fleet exited with ${fleet.child.exitCode}`)
        return (await fetch(`http://127.0.0.1:${fleetPort}/readyz`)).ok ? true : undefined
      },
      60_000
    )
  })
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

describe("preheat fleet", () => {
  it("registers N Ready nodes, each gets a NodeImage, and a job pulls on all of them", async () => {
    const nodes = await cluster.getYaml(["nodes"])
    expect(nodes.items.map((n: any) => n.metadata.name).sort()).toEqual(["node-1", "node-2", "node-3", "node-4"])
    for (const node of nodes.items) {
      expect(node.status.conditions).toContainEqual(expect.objectContaining({ type: "Ready", status: "True" }))
    }
    await cluster.applyFile(
      "job",
      `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: fleet-job
  namespace: default
spec:
  image: busybox:1.36
  parallelism: 2
  completionPolicy:
    type: Always
`
    )
    const status = await eventually(
      "the job complete",
      async () => {
        const job = await cluster.getYaml(["ipj", "fleet-job"])
        return job.status?.completionTime === undefined ? undefined : job.status
      },
      60_000
    )
    expect(status).toMatchObject({ desired: 4, succeeded: 4, failed: 0 })
    const readiness = await (await fetch(`http://127.0.0.1:${fleetPort}/readyz?verbose`)).text()
    expect(readiness).toContain("[+]daemons-synced ok")
  })
})
