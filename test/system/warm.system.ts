/**
 * Warm before schedule (issue 27) on the built bundle as separate processes: the API server, the
 * controller (`--warm-timeout 20s`) and a daemon per node, driven with kubectl. A node joins with
 * preheat's startup taint; a Never job warms it and the taint goes only after its pull succeeded
 * there (other taints stay); a node whose daemon never comes is released at the timeout, and one
 * whose warming pull fails at once, each with Warning events; the metrics count each outcome.
 */
import { execFile } from "node:child_process"
import { resolve } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Duration } from "effect"
import { Cluster, metricSum, scrape, tagPhases } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

const key = "preheat.kruise.io/warming"
const bundle = resolve(import.meta.dirname, "../../dist/preheat.mjs")
let cluster: Cluster
let metricsPort = 0

beforeAll(async () => {
  cluster = await Cluster.startWith(
    async (cluster) => {
      await cluster.createNodes(["node-1"], {})
      metricsPort = await freePort()
      await cluster.startController("controller", metricsPort, ["--warm-timeout", "20s"])
      await cluster.startDaemon("node-1", await freePort())
      await eventually("node-1's NodeImage", async () =>
        (await cluster.kubectl(["get", "nodeimage", "node-1"])).code === 0 ? true : undefined
      )
    },
    ["--workloads"]
  )
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

/** A Node as the kubelet registers it with `--register-with-taints`, then Ready. */
const join = async (name: string, taints: ReadonlyArray<Record<string, string>>) => {
  const applied = await cluster.applyFile(
    `node-${name}`,
    `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: {kubernetes.io/hostname: ${name}, pool: ${name}}
spec:
  taints: ${JSON.stringify(taints)}
`
  )
  expect(applied.stderr).toBe("")
  await cluster.ok([
    "patch",
    "node",
    name,
    "--subresource=status",
    "--type=merge",
    "-p",
    '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}'
  ])
}

const neverJob = (name: string, image: string, pool: string | undefined, pullPolicy = "{}") =>
  cluster.applyFile(
    name,
    `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata: {name: ${name}, namespace: default}
spec:
  image: ${image}
  parallelism: 10
  ${pool === undefined ? "" : `selector: {matchLabels: {pool: ${pool}}}`}
  pullPolicy: ${pullPolicy}
  completionPolicy: {type: Never}
`
  )

/** `preheat status` from the bundle, as a user runs it (plain text: stdout is a pipe). */
const status = () =>
  new Promise<string>((done, fail) => {
    execFile(process.execPath, [bundle, "status", "--kubeconfig", cluster.kubeconfig], { timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? done(stdout) : fail(new Error(`preheat status: ${stderr}`))
    )
  })

const taintsOf = async (node: string): Promise<Array<{ key: string; effect: string }>> =>
  (await cluster.getYaml(["node", node])).spec?.taints ?? []

const events = async (name: string): Promise<Array<{ type: string; reason: string; message: string }>> =>
  (await cluster.getYaml(["events", "-A", "--field-selector", `involvedObject.name=${name}`])).items

describe("warm before schedule, on separate processes", () => {
  it("a node joins tainted, a Never job warms it, and the taint goes only after the pull; other taints stay", async () => {
    expect((await neverJob("base", "nginx:1.25.3", undefined)).stderr).toBe("")
    await eventually("base pulled on node-1", async () =>
      tagPhases(await cluster.getYaml(["nodeimage", "node-1"]), "nginx")["1.25.3"] === "Succeeded" ? true : undefined
    )
    const gpu = { key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" }
    await join("node-warm", [gpu, { key, effect: "NoSchedule" }])
    await cluster.startDaemon("node-warm", await freePort())
    // Every sighting of the node without the taint must find the image pulled there.
    const seen: Array<{ tainted: boolean; phase: string | undefined }> = []
    await eventually(
      "node-warm's taint removed",
      async () => {
        // The taint first, the NodeImage after: a tag Succeeded stays so, so a taint gone then
        // must find the tag Succeeded now.
        const taints = await taintsOf("node-warm")
        const nodeImage = await cluster.kubectl(["get", "nodeimage", "node-warm", "-o", "json"])
        const phase = nodeImage.code === 0 ? tagPhases(JSON.parse(nodeImage.stdout), "nginx")["1.25.3"] : undefined
        const tainted = taints.some((t) => t.key === key)
        seen.push({ tainted, phase })
        return tainted ? undefined : true
      },
      60_000,
      100
    )
    expect(seen.filter((s) => !s.tainted && s.phase !== "Succeeded")).toEqual([])
    expect(seen[0]?.tainted).toBe(true)
    expect(await taintsOf("node-warm")).toEqual([gpu])
    const onNode = await events("node-warm")
    expect(onNode.find((e) => e.reason === "Warmed")?.message).toContain("the images of default/base are on the node")
    expect((await events("base")).find((e) => e.reason === "NodeReleased")?.message).toContain(
      "node node-warm released now that it is warm"
    )
  })

  it("a node whose images never come is released at the warm timeout, with Warnings naming what was not warmed", async () => {
    expect((await neverJob("for-idle", "busybox:1.36", "node-idle")).stderr).toBe("")
    await join("node-idle", [{ key, effect: "NoSchedule" }])
    // No daemon on node-idle (its DaemonSet pod not started, say): nothing is ever pulled there.
    const joined = Date.now()
    // While it is held, `preheat status` lists it with the pull it waits on.
    await eventually("node-idle in preheat status", async () => {
      const text = await status()
      return text.includes("nodes warming 1") && /node-idle.*\n\s+busybox:1\.36 {2}Waiting/.test(text) ? true : undefined
    })
    await eventually("node-idle released", async () => ((await taintsOf("node-idle")).length === 0 ? true : undefined), 90_000, 250)
    expect(Date.now() - joined).toBeGreaterThanOrEqual(15_000)
    const warning = (await events("node-idle")).find((e) => e.reason === "ReleasedUnwarmed")
    expect(warning?.type).toBe("Warning")
    expect(warning?.message).toContain("after the warm timeout (20s)")
    expect(warning?.message).toContain("job default/for-idle image busybox:1.36")
    const onJob = (await events("for-idle")).find((e) => e.reason === "NodeReleasedUnwarmed")
    expect(onJob?.message).toContain("node node-idle released after the warm timeout (20s): image busybox:1.36 not warmed there")
  })

  it("a node whose warming pull fails is released at once, long before the timeout", async () => {
    // An image whose simulated pull takes well over the job's 1 s pull timeout: the pull fails.
    const slow = ["golang:1.22", "tensorflow/tensorflow:2.15.0", "pytorch/pytorch:2.2.0", "postgres:16.2", "node:20.11"].find(
      (image) => Duration.toMillis(simulatedPullTime(image)) > 3000
    )
    expect(slow).toBeDefined()
    expect((await neverJob("too-slow", slow!, "node-fail", "{timeoutSeconds: 1, backoffLimit: 0}")).stderr).toBe("")
    await join("node-fail", [{ key, effect: "NoSchedule" }])
    await cluster.startDaemon("node-fail", await freePort())
    await eventually("node-fail released", async () => ((await taintsOf("node-fail")).length === 0 ? true : undefined), 60_000, 250)
    // Released for the failure, not by the timeout (the words say which; no timing is asserted on a loaded machine).
    const warning = (await events("node-fail")).find((e) => e.reason === "ReleasedUnwarmed")
    expect(warning?.message).toContain("because a warming pull failed")
    expect(warning?.message).toContain(`job default/too-slow image ${slow}`)
  })

  it("a Deployment's pod meant for a joining node is held off while the taint is on, and placed there after", async () => {
    expect((await neverJob("for-place", "redis:7.2.4", "node-place")).stderr).toBe("")
    const deployment = await cluster.applyFile(
      "place",
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: place, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: place}}
  template:
    metadata: {labels: {app: place}}
    spec:
      nodeSelector: {pool: node-place}
      containers: [{name: place, image: "redis:7.2.4"}]
`
    )
    expect(deployment.stderr).toBe("")
    const pod = async () => {
      const pods = (await cluster.getYaml(["pods", "-l", "app=place"])).items
      return pods.length === 1 ? pods[0] : undefined
    }
    const scheduled = (p: any) => (p.status?.conditions ?? []).find((c: any) => c.type === "PodScheduled")
    // The Deployment and ReplicaSet stand-ins made the pod; no node matches it yet.
    await eventually("the pod, unschedulable", async () => ((await pod())?.status?.conditions === undefined ? undefined : true))
    await join("node-place", [{ key, effect: "NoSchedule" }])
    // Held: no daemon on node-place yet, so nothing can warm it; the scheduler names the taint.
    const held = await eventually("the pod unschedulable for the warming taint", async () => {
      const current = await pod()
      return scheduled(current)?.message?.includes(`node(s) had untolerated taint {${key}: }`) ? current : undefined
    })
    expect(held.spec.nodeName).toBeUndefined()
    expect(scheduled(held)).toMatchObject({ status: "False", reason: "Unschedulable" })
    expect((await taintsOf("node-place")).map((t) => t.key)).toEqual([key])

    await cluster.startDaemon("node-place", await freePort())
    // The pod first, the taint after: a taint still there then was there when the pod was read.
    const seen: Array<{ tainted: boolean; node: string | undefined }> = []
    await eventually(
      "node-place's taint removed",
      async () => {
        const node = (await pod())?.spec?.nodeName
        const tainted = (await taintsOf("node-place")).some((t) => t.key === key)
        seen.push({ tainted, node })
        return tainted ? undefined : true
      },
      60_000,
      100
    )
    expect(seen[0]?.tainted).toBe(true)
    expect(seen.filter((s) => s.tainted && s.node !== undefined)).toEqual([])
    const placed = await eventually("the pod bound to node-place", async () => {
      const current = await pod()
      return current?.spec?.nodeName === "node-place" ? current : undefined
    })
    // Bound, and Pending: its kubelet's runtime is the daemon's process, not the API server's.
    expect(placed.status.phase).toBe("Pending")
    expect(scheduled(placed)?.status).toBe("True")
    // In the API server's own times (whole seconds): bound no earlier than the controller's write
    // removing the taint (its managedFields entry; it writes the Node for nothing else).
    const warmed = (await events("node-place")).find((e: any) => e.reason === "Warmed") as any
    expect(warmed?.message).toMatch(/the images of .*default\/for-place are on the node/)
    const node = JSON.parse(await cluster.ok(["get", "node", "node-place", "-o", "json", "--show-managed-fields"]))
    const removed = taintsWrittenAt(node)
    expect(removed).not.toBeNaN()
    expect(Date.parse(scheduled(placed).lastTransitionTime)).toBeGreaterThanOrEqual(removed)
    const failed = (await events(placed.metadata.name)).filter((e) => e.reason === "FailedScheduling")
    expect(failed.map((e) => e.message).join("\n")).toContain(`untolerated taint {${key}: }`)
  })

  it("the metrics count each outcome, and no node is left warming", async () => {
    await eventually(
      "the warm histogram and gauge sampled",
      async () => {
        const body = await scrape(metricsPort)
        const count = (outcome: string) => metricSum(body, `preheat_node_warm_seconds_count{outcome="${outcome}"}`)
        const done = count("warmed") >= 1 && count("timeout") >= 1 && count("failed") >= 1
        return done && metricSum(body, "preheat_nodes_warming") === 0 ? true : undefined
      },
      30_000,
      500
    )
  })
})

/** When preheat's controller last wrote the Node's taints, as the API server records it in managedFields. */
const taintsWrittenAt = (node: any): number => {
  const entries: Array<any> = node.metadata.managedFields ?? []
  const controller = entries.find(
    (e) => e.manager === "preheat-controller" && e.subresource === undefined && e.fieldsV1?.["f:spec"]?.["f:taints"]
  )
  return Date.parse(controller?.time)
}
