/**
 * A cluster of real processes (test/system/cluster.ts) whose controllers and daemons reach the API
 * server through a FaultProxy, while kubectl (the test's own eyes) goes to it directly.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Duration } from "effect"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Cluster, metricSum, type Process, scrape } from "../system/cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"
import { FaultProxy } from "../support/faultProxy.ts"

export interface FaultCluster {
  readonly cluster: Cluster
  readonly proxy: FaultProxy
  readonly daemonPorts: Record<string, number>
  readonly controllers: Array<{ readonly process: Process; readonly port: number }>
}

/** Images whose simulated pull takes between minMs and maxMs, distinct per call (a fresh tag every time). */
let imageCounter = 0
export const imagePulling = (minMs: number, maxMs: number): string => {
  for (let i = 0; i < 10_000; i++) {
    const image = `example.com/faults/app${imageCounter++}:v1`
    const ms = Duration.toMillis(simulatedPullTime(image))
    if (ms >= minMs && ms <= maxMs) return image
  }
  throw new Error(`no image pulling in ${minMs}-${maxMs} ms`)
}

const apiserverUrl = (kubeconfig: string): string => {
  const match = /server:\s*(\S+)/.exec(readFileSync(kubeconfig, "utf8"))
  if (match === null) throw new Error(`no server in ${kubeconfig}`)
  return match[1]!.replace(/^"|"$/g, "")
}

/** Starts the API server, the proxy in front of it, `controllers` controller replicas and a daemon per node. */
export const startFaultCluster = async (nodes: ReadonlyArray<string>, controllers: number): Promise<FaultCluster> => {
  let proxy: FaultProxy | undefined
  const daemonPorts: Record<string, number> = {}
  const started: FaultCluster["controllers"] = []
  const cluster = await Cluster.startWith(async (cluster) => {
    const upstream = apiserverUrl(cluster.kubeconfig)
    const faults = (proxy = await FaultProxy.start(upstream))
    // Each process has its own address on the proxy, which so tells whose retry a request is.
    const proxied = async (name: string) => {
      const file = join(cluster.dir, `kubeconfig-${name}`)
      writeFileSync(
        file,
        readFileSync(cluster.kubeconfig, "utf8")
          .split(upstream)
          .join(await faults.urlFor(name))
      )
      return file
    }
    await cluster.createNodes(nodes, {})
    await cluster.ok([
      "create",
      "secret",
      "docker-registry",
      "regcred",
      "--docker-server=example.com",
      "--docker-username=u",
      "--docker-password=p"
    ])
    for (const node of nodes) {
      const port = await freePort()
      daemonPorts[node] = port
      const daemon = cluster.spawn(`daemon-${node}`, [
        "simulated-daemon",
        "--node-name",
        node,
        "--kubeconfig",
        await proxied(node),
        "--metrics-port",
        String(port),
        "--metrics-host",
        "127.0.0.1"
      ])
      await cluster.waitHealthy(daemon, port)
    }
    for (let i = 1; i <= controllers; i++) {
      const port = await freePort()
      const name = `controller-${i}`
      const controller = cluster.spawn(
        name,
        [
          "controller",
          "--kubeconfig",
          await proxied(name),
          "--metrics-port",
          String(port),
          "--metrics-host",
          "127.0.0.1",
          "--node-ready-delay-seconds",
          "1",
          "--leader-election-namespace",
          "preheat-system"
        ],
        { POD_NAME: name }
      )
      await cluster.waitHealthy(controller, port)
      started.push({ process: controller, port })
    }
    await eventually("a NodeImage per node", async () => {
      const names = (await cluster.ok(["get", "nodeimages", "-o", "name"]))
        .trim()
        .split("\n")
        .filter((n) => n !== "")
      return names.length === nodes.length ? names : undefined
    })
  })
  return { cluster, proxy: proxy!, daemonPorts, controllers: started }
}

export const pullsOn = async (fc: FaultCluster): Promise<Record<string, number>> =>
  Object.fromEntries(
    await Promise.all(
      Object.entries(fc.daemonPorts).map(async ([node, port]) => [node, metricSum(await scrape(port), "preheat_pulls_total")] as const)
    )
  )

export const jobManifest = (name: string, image: string, parallelism: number) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
  namespace: default
spec:
  image: ${image}
  parallelism: ${parallelism}
  pullSecrets: [regcred]
  completionPolicy:
    type: Always
`

/** Resident set size of a process now, and its peak, in MiB (Linux /proc). */
export const memoryOf = (process: Process): { readonly rssMiB: number; readonly peakMiB: number } => {
  const status = readFileSync(`/proc/${process.child.pid}/status`, "utf8")
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN)
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 }
}
