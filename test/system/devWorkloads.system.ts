/**
 * `preheat dev` runs workloads (issue 15): the built executable with 4 simulated nodes, driven
 * only with kubectl 1.32. A Deployment rolls out and rolls to a new image (a new ReplicaSet
 * named by its pod-template-hash, the old one scaled to 0) with `kubectl rollout status`
 * finishing each time; a StatefulSet and a DaemonSet roll to new controller-revision-hashes;
 * pods sit on nodes; an image preheat pulled beforehand starts the pods without a pull; deleting
 * the Deployment garbage-collects its ReplicaSets and pods.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

interface Obj {
  readonly metadata: {
    readonly name: string
    readonly labels?: Record<string, string>
    readonly annotations?: Record<string, string>
    readonly ownerReferences?: ReadonlyArray<{ kind: string; name: string; controller?: boolean }>
  }
  readonly spec: Record<string, any>
  readonly status?: Record<string, any>
  readonly [key: string]: any
}

const workloads = (image: { web: string; db: string; agent: string }) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "${image.web}"}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "${image.db}"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/arch: amd64}
      containers: [{name: agent, image: "${image.agent}"}]
`

describe("preheat dev runs Deployments, StatefulSets and DaemonSets", () => {
  it("rolls each out and to a new image with kubectl, pods on nodes, and garbage-collects them", async () => {
    await withDev({ nodes: 4, prefix: "preheat-dev-workloads-" }, async (dev) => {
      const { dir, kubectl } = dev
      const items = async (kind: string, selector: string): Promise<Array<Obj>> =>
        JSON.parse(await kubectl(["get", kind, "-l", selector, "-o", "json"])).items
      const get = async (kind: string, name: string): Promise<Obj> => JSON.parse(await kubectl(["get", kind, name, "-o", "json"]))
      const first = { web: "nginx:1.25.3", db: "redis:7.2.4", agent: "busybox:1.36.1" }
      writeFileSync(join(dir, "v1.yaml"), workloads(first))
      await kubectl(["apply", "-f", join(dir, "v1.yaml")])
      for (const workload of ["deployment/web", "statefulset/db", "daemonset/agent"]) {
        expect(await kubectl(["rollout", "status", workload, "--timeout=90s"])).toMatch(/successfully rolled out|roll out complete/)
      }

      // Deployment: one ReplicaSet <web>-<hash>, its pods labelled with the hash, Running on nodes.
      const [rs1] = await items("replicasets", "app=web")
      const hash1 = rs1!.metadata.labels!["pod-template-hash"]!
      expect(rs1!.metadata.name).toBe(`web-${hash1}`)
      expect(rs1!.spec.selector.matchLabels).toEqual({ app: "web", "pod-template-hash": hash1 })
      expect(rs1!.metadata.annotations!["deployment.kubernetes.io/revision"]).toBe("1")
      expect(rs1!.metadata.ownerReferences).toMatchObject([{ kind: "Deployment", name: "web", controller: true }])
      const webPods = await items("pods", "app=web")
      expect(webPods).toHaveLength(3)
      for (const pod of webPods) {
        expect(pod.metadata.labels!["pod-template-hash"]).toBe(hash1)
        expect(pod.metadata.ownerReferences).toMatchObject([{ kind: "ReplicaSet", name: rs1!.metadata.name, controller: true }])
        expect(pod.spec.nodeName).toMatch(/^node-[1-4]$/)
        expect(pod.status).toMatchObject({
          phase: "Running",
          containerStatuses: [{ ready: true, started: true, image: "docker.io/library/nginx:1.25.3" }]
        })
        expect(pod.status!.containerStatuses[0].imageID).not.toBe("")
        expect(pod.status!.conditions.find((c: any) => c.type === "Ready").status).toBe("True")
      }
      // The least-loaded node first: three pods on three different nodes.
      expect(new Set(webPods.map((p) => p.spec.nodeName)).size).toBe(3)
      const wide = await kubectl(["get", "pods", "-l", "app=web", "-o", "wide"])
      expect(wide).toMatch(/Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+node-\d/)
      // Nothing was on the nodes: the kubelet pulled, and said how long it took.
      const pulledEvents = await kubectl(["get", "events", "--field-selector", "reason=Pulled", "-o", "custom-columns=MSG:.message"])
      expect(pulledEvents).toMatch(
        /Successfully pulled image "nginx:1\.25\.3" in [\d.]+m?s \([\d.]+m?s including waiting\)\. Image size: \d+ bytes\./
      )

      // Pre-pull the next web image everywhere with preheat, then roll to it: no pod waits for a pull.
      writeFileSync(
        join(dir, "prepull.yaml"),
        `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: next-web}
spec:
  image: nginx:1.27.0
  parallelism: 4
  completionPolicy: {type: Always}
`
      )
      await kubectl(["apply", "-f", join(dir, "prepull.yaml")])
      await kubectl(["wait", "ipj/next-web", "--for=condition=Complete", "--timeout=90s"])
      await kubectl(["set", "image", "deployment/web", "web=nginx:1.27.0"])
      await kubectl(["set", "image", "statefulset/db", "db=redis:7.4.0"])
      await kubectl(["set", "image", "daemonset/agent", "agent=busybox:1.37.0"])
      for (const workload of ["deployment/web", "statefulset/db", "daemonset/agent"]) {
        expect(await kubectl(["rollout", "status", workload, "--timeout=90s"])).toMatch(/successfully rolled out|roll out complete/)
      }

      const sets = await items("replicasets", "app=web")
      expect(sets).toHaveLength(2)
      const rs2 = sets.find((s) => s.metadata.name !== rs1!.metadata.name)!
      const hash2 = rs2.metadata.labels!["pod-template-hash"]!
      expect(hash2).not.toBe(hash1)
      expect(rs2.metadata.name).toBe(`web-${hash2}`)
      expect(rs2.metadata.annotations!["deployment.kubernetes.io/revision"]).toBe("2")
      expect(sets.find((s) => s.metadata.name === rs1!.metadata.name)!.spec.replicas).toBe(0)
      expect(rs2.spec.replicas).toBe(3)
      const rolled = await items("pods", "app=web")
      expect(rolled.map((p) => p.metadata.labels!["pod-template-hash"])).toEqual([hash2, hash2, hash2])
      expect((await get("deployment", "web")).metadata.annotations!["deployment.kubernetes.io/revision"]).toBe("2")
      // The point of the whole feature: the pre-pulled image was there when the pods started.
      for (const pod of rolled) {
        const events = await kubectl([
          "get",
          "events",
          "--field-selector",
          `involvedObject.name=${pod.metadata.name},reason=Pulled`,
          "-o",
          "custom-columns=MSG:.message"
        ])
        expect(events).toContain(`Container image "nginx:1.27.0" already present on machine`)
      }

      // StatefulSet: pods db-0..2 at the update revision, which is now also the current one.
      const db = await get("statefulset", "db")
      expect(db.status).toMatchObject({ replicas: 3, readyReplicas: 3, updatedReplicas: 3, observedGeneration: 2 })
      expect(db.status!.currentRevision).toBe(db.status!.updateRevision)
      const dbRevisions = await items("controllerrevisions", "app=db")
      expect(dbRevisions.map((r) => r.revision).sort()).toEqual([1, 2])
      const dbLatest = dbRevisions.find((r) => r.revision === 2)!
      expect(dbLatest.metadata.name).toBe(db.status!.updateRevision)
      expect(dbLatest.metadata.name).toBe(`db-${dbLatest.metadata.labels!["controller-revision-hash"]}`)
      expect(dbLatest.data.spec.template.spec.containers[0].image).toBe("redis:7.4.0")
      const dbPods = await items("pods", "app=db")
      expect(dbPods.map((p) => p.metadata.name).sort()).toEqual(["db-0", "db-1", "db-2"])
      for (const pod of dbPods) expect(pod.metadata.labels!["controller-revision-hash"]).toBe(db.status!.updateRevision)

      // DaemonSet: one pod on each amd64 node (node-4 is arm64), labelled with the new revision's hash.
      const agent = await get("daemonset", "agent")
      expect(agent.status).toMatchObject({
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
        observedGeneration: 2
      })
      const agentRevisions = await items("controllerrevisions", "app=agent")
      const agentLatest = agentRevisions.find((r) => r.revision === 2)!
      const agentHash = agentLatest.metadata.labels!["controller-revision-hash"]!
      expect(agentLatest.metadata.name).toBe(`agent-${agentHash}`)
      const agentPods = await items("pods", "app=agent")
      expect(agentPods.map((p) => p.spec.nodeName).sort()).toEqual(["node-1", "node-2", "node-3"])
      for (const pod of agentPods) expect(pod.metadata.labels!["controller-revision-hash"]).toBe(agentHash)

      // Deleting the Deployment takes its ReplicaSets and their pods with it.
      await kubectl(["delete", "deployment", "web"])
      await eventually("the ReplicaSets and pods of web to be collected", async () =>
        (await items("replicasets", "app=web")).length === 0 && (await items("pods", "app=web")).length === 0 ? true : undefined
      )
    })
  }, 300_000)
})
