/**
 * Workload-driven pre-pull (issue 15, part 1) on the built bundle: API server, controller and
 * three daemons as processes, driven with kubectl. No workload controller runs here, so the test
 * makes the ReplicaSets and pods (and their status) that kube-controller-manager and the kubelet
 * would, with kubectl, around the user's own steps (apply, set image, delete).
 */
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Cluster, tagPhases } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"

const nodes = ["node-1", "node-2", "node-3"] as const
let cluster: Cluster

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.startNodes(nodes, {})
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

/** The ReplicaSet the deployment controller makes for the Deployment's current template. */
const replicaSet = (uid: string, hash: string, image: string, replicas: number, revision: number) => `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: shop-${hash}
  labels: {app: shop, pod-template-hash: "${hash}"}
  annotations: {deployment.kubernetes.io/revision: "${revision}"}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: shop, uid: ${uid}, controller: true, blockOwnerDeletion: true}]
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: shop, pod-template-hash: "${hash}"}}
  template:
    metadata: {labels: {app: shop, pod-template-hash: "${hash}"}}
    spec: {containers: [{name: app, image: "${image}"}]}
`

/** A pod of a ReplicaSet, bound to a node, then Ready as the kubelet reports it. */
const startPod = async (name: string, rs: string, hash: string, image: string, node: string) => {
  const uid = (await cluster.ok(["get", "rs", rs, "-o", "jsonpath={.metadata.uid}"])).trim()
  const applied = await cluster.applyFile(
    name,
    `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {app: shop, pod-template-hash: "${hash}"}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: ${rs}, uid: ${uid}, controller: true, blockOwnerDeletion: true}]
spec:
  nodeName: ${node}
  containers: [{name: app, image: "${image}"}]
`
  )
  expect(applied.stderr).toBe("")
  await cluster.ok([
    "patch",
    "pod",
    name,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } })
  ])
}

describe("workload-driven pre-pull, with kubectl", () => {
  it("a new image of an annotated Deployment: an ImagePullJob on the old pods' nodes, an Event, GC with it", async () => {
    const example = join(import.meta.dirname, "../../deploy/examples/deployment-with-predownload.yaml")
    await cluster.ok(["apply", "-f", example])
    const uid = (await cluster.ok(["get", "deployment", "shop", "-o", "jsonpath={.metadata.uid}"])).trim()
    expect((await cluster.applyFile("rs-old", replicaSet(uid, "aaa", "nginx:1.25.3", 4, 1))).stderr).toBe("")
    const placement = ["node-1", "node-2", "node-3", "node-1"]
    for (const [i, node] of placement.entries()) await startPod(`shop-aaa-${i}`, "shop-aaa", "aaa", "nginx:1.25.3", node)

    // The user's rollout; then what the deployment controller does: a new ReplicaSet whose pod
    // replaces the old one on node-3.
    await cluster.ok(["set", "image", "deployment/shop", "app=nginx:1.25.4"])
    expect((await cluster.applyFile("rs-new", replicaSet(uid, "bbb", "nginx:1.25.4", 1, 2))).stderr).toBe("")
    // (`kubectl scale` needs the scale subresource, which the embedded API server does not serve.)
    await cluster.ok(["patch", "rs", "shop-aaa", "--type=merge", "-p", '{"spec":{"replicas":3}}'])
    await cluster.ok(["delete", "pod", "shop-aaa-2", "--wait=false"])
    // min-updated-ready-pods is 1: nothing before the new pod is Ready.
    await new Promise((done) => setTimeout(done, 1500))
    expect((await cluster.ok(["get", "ipj", "-o", "name"])).trim()).toBe("")
    await startPod("shop-bbb-0", "shop-bbb", "bbb", "nginx:1.25.4", "node-3")

    await eventually("the pre-download job", async () => (await cluster.kubectl(["get", "ipj", "shop-bbb-app"])).code === 0 || undefined)
    await cluster.ok(["wait", "ipj/shop-bbb-app", "--for=jsonpath={.status.completionTime}", "--timeout=60s"])
    const job = await cluster.getYaml(["ipj", "shop-bbb-app"])
    expect(job.spec).toMatchObject({
      image: "nginx:1.25.4",
      parallelism: 2,
      podSelector: { matchLabels: { app: "shop" }, matchExpressions: [{ key: "pod-template-hash", operator: "NotIn", values: ["bbb"] }] },
      completionPolicy: { type: "Always", ttlSecondsAfterFinished: 600 }
    })
    expect(job.metadata.ownerReferences).toEqual([
      { apiVersion: "apps/v1", kind: "Deployment", name: "shop", uid, controller: true, blockOwnerDeletion: true }
    ])
    // node-1 and node-2 run the old pods; node-3 runs only the new one.
    expect(job.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 })
    const pulled = await Promise.all(nodes.map(async (node) => [node, tagPhases(await cluster.getYaml(["nodeimage", node]), "nginx")]))
    expect(pulled).toEqual([
      ["node-1", { "1.25.4": "Succeeded" }],
      ["node-2", { "1.25.4": "Succeeded" }],
      ["node-3", {}]
    ])

    const events = (await cluster.getYaml(["events"])).items
      .filter((e: any) => e.involvedObject.kind === "Deployment" && e.involvedObject.name === "shop")
      .map((e: any) => [e.type, e.reason, e.message])
    expect(events).toContainEqual(["Normal", "CreatedImagePullJob", 'created ImagePullJob shop-bbb-app for image: "nginx:1.25.4"'])

    await cluster.ok(["delete", "deployment", "shop"])
    await eventually(
      "the job garbage-collected with its Deployment",
      async () => (await cluster.ok(["get", "ipj", "-o", "name"])).trim() === "" || undefined
    )
  })
})
