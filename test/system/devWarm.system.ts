/**
 * Warm before schedule in `preheat dev` (issue 27), through kubectl only: a Node applied with
 * kubectl joins as a simulated node with preheat's startup taint; a Never job warms it; a
 * Deployment's pod meant for it is placed there only once the taint is gone (and starts without a
 * pull); a DaemonSet without a toleration gets its pod there only then, one tolerating every taint
 * at once; deleting the Node takes its simulated node away, and applying it again makes a new one.
 * Prints the time from the Node's apply to the taint's removal.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const key = "preheat.kruise.io/warming"

const job = `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata: {name: base, namespace: default}
spec:
  image: nginx:1.25.3
  parallelism: 10
  completionPolicy: {type: Never}
`

const node = (taints: string) => `apiVersion: v1
kind: Node
metadata:
  name: node-new
  labels: {kubernetes.io/hostname: node-new, kubernetes.io/arch: amd64}
spec:
  taints: ${taints}
`

const workloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-new}
      containers: [{name: web, image: "nginx:1.25.3"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: logger, namespace: default}
spec:
  selector: {matchLabels: {app: logger}}
  template:
    metadata: {labels: {app: logger}}
    spec:
      containers: [{name: logger, image: "busybox:1.36.1"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: cni, namespace: default}
spec:
  selector: {matchLabels: {app: cni}}
  template:
    metadata: {labels: {app: cni}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: cni, image: "busybox:1.36.1"}]
`

describe("preheat dev: a node joins with kubectl, tainted, and takes pods only once warm", () => {
  it("holds the Deployment's pod off until the Never job warmed the node, then places it there", async () => {
    await withDev({ nodes: 3, prefix: "preheat-dev-warm-" }, async (dev) => {
      const { kubectl, apply } = dev
      const json = async (args: ReadonlyArray<string>): Promise<any> => JSON.parse(await kubectl(["get", ...args, "-o", "json"]))
      const tainted = async () => ((await json(["node", "node-new"])).spec?.taints ?? []).some((t: { key: string }) => t.key === key)
      const podsOf = async (app: string): Promise<Array<any>> => (await json(["pods", "-l", `app=${app}`])).items
      const onNewNode = async (app: string) => (await podsOf(app)).filter((p) => p.spec.nodeName === "node-new")

      await apply("job", job)
      await eventually(
        "base pulled on the 3 nodes",
        async () => ((await json(["ipj", "base"])).status?.succeeded === 3 ? true : undefined),
        60_000
      )

      const joined = Date.now()
      await apply("node", node(`[{key: ${key}, effect: NoSchedule}]`))
      await apply("workloads", workloads)
      // While held: Ready (the simulated kubelet reports it), the web pod unschedulable, only the tolerating daemon there.
      await eventually("node-new Ready", async () =>
        (await json(["node", "node-new"])).status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True")
          ? true
          : undefined
      )
      const whileHeld: Array<{ tainted: boolean; web: number; logger: number }> = []
      await eventually(
        "the taint removed",
        async () => {
          // Pods first, the taint after: a taint still there then was there when the pods were read.
          const web = (await onNewNode("web")).length
          const logger = (await onNewNode("logger")).length
          const sample = { tainted: await tainted(), web, logger }
          whileHeld.push(sample)
          return sample.tainted ? undefined : true
        },
        60_000,
        100
      )
      const released = Date.now()
      console.log(`preheat dev: node-new from kubectl apply to its taint removed: ${((released - joined) / 1000).toFixed(1)} s`)
      expect(whileHeld.filter((s) => s.tainted && (s.web > 0 || s.logger > 0))).toEqual([])
      expect(whileHeld[0]?.tainted).toBe(true)
      const scheduling = (await json(["events", "--field-selector", "reason=FailedScheduling"])).items.map((e: any) => e.message)
      expect(scheduling.join("\n")).toContain(`had untolerated taint {${key}: }`)
      expect(await onNewNode("cni")).toHaveLength(1)

      // Released: the web pod is placed there and starts on the image preheat pulled.
      const [web] = await eventually(
        "the web pod Running on node-new",
        async () => {
          const pods = await onNewNode("web")
          return pods.length === 1 && pods[0].status?.phase === "Running" ? pods : undefined
        },
        60_000
      )
      const pulled = (await json(["events", "--field-selector", `involvedObject.name=${web.metadata.name},reason=Pulled`])).items
      expect(pulled.map((e: any) => e.message)).toEqual(['Container image "nginx:1.25.3" already present on machine'])
      await eventually("the logger daemon on node-new", async () => ((await onNewNode("logger")).length === 1 ? true : undefined))

      // Deleted with kubectl: its simulated node goes (the NodeImage with it); applied again, it joins afresh.
      await kubectl(["delete", "deployment", "web"])
      await kubectl(["delete", "node", "node-new"])
      await eventually("node-new's NodeImage gone", async () =>
        (await kubectl(["get", "nodeimages", "-o", "name"])).includes("node-new") ? undefined : true
      )
      await apply("node-again", node("[]"))
      await eventually(
        "node-new Ready again, warmed by the Never job",
        async () => {
          const ni = await json(["nodeimages"])
          const again = ni.items.find((n: any) => n.metadata.name === "node-new")
          return again?.status?.imageStatuses?.nginx?.tags?.[0]?.phase === "Succeeded" ? true : undefined
        },
        60_000
      )
    })
  }, 300_000)
})
