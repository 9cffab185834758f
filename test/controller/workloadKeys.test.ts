import { describe, expect, it } from "vitest"
import type { Change } from "../../src/kube/store.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { objectKey } from "../../src/kube/objectKey.ts"
import { parseWorkloadKey, workloadChangeKeys, workloadKey, workloadKeysFor } from "../../src/controller/workload/keys.ts"
import type { WorkloadLookup } from "../../src/controller/workload/keys.ts"
import { controllerRevision, daemonSet, deployment, pod, replicaSet, statefulSet } from "../support/workloads.ts"

const on = { "apps.kruise.io/image-predownload-parallelism": "1" }

/** 50 annotated Deployments with a ReplicaSet and 4 pods each, one StatefulSet, one DaemonSet, one plain Deployment. */
const cluster = () => {
  const deployments = Array.from({ length: 50 }, (_, i) =>
    deployment({ name: `web${i}`, uid: `d${i}`, images: { app: "web:1" }, annotations: on })
  )
  const replicaSets = deployments.map((d, i) => replicaSet(d, `h${i}`, { replicas: 4, revision: 1, uid: `rs${i}` }))
  const pods = replicaSets.flatMap((rs, i) =>
    [0, 1, 2, 3].map((j) => pod(rs, `web${i}-${j}`, { node: `n${j}`, revisionLabel: "pod-template-hash", revision: `h${i}` }))
  )
  const plain = deployment({ name: "plain", uid: "dp", images: { app: "web:1" } })
  const plainRs = replicaSet(plain, "p", { replicas: 1, revision: 1, uid: "rsp" })
  const sts = statefulSet({ name: "db", uid: "s1", images: { db: "db:1" }, annotations: on })
  const ds = daemonSet({ name: "agent", uid: "ds1", images: { agent: "agent:1" }, annotations: on })
  const store = new Map<string, KubeObject>()
  for (const o of [...deployments, plain, sts, ds]) store.set(`${o.kind}:${objectKey(o)}`, o)
  const rsStore = new Map([...replicaSets, plainRs].map((rs) => [objectKey(rs), rs]))
  const lookup: WorkloadLookup = {
    replicaSet: (key) => rsStore.get(key),
    workload: (kind, key) => store.get(`${kind}:${key}`)
  }
  return { deployments, replicaSets, pods, plain, plainRs, sts, ds, lookup }
}

const stored = (raw: KubeObject) => ({ raw, view: raw })
const added = (current: KubeObject): Change => ({ type: "added", current: stored(current) })
const deleted = (old: KubeObject): Change => ({ type: "deleted", old: stored(old) })
const modified = (old: KubeObject, current: KubeObject): Change => ({ type: "modified", old: stored(old), current: stored(current) })
const withStatus = (o: KubeObject, status: Record<string, unknown>): KubeObject => ({
  ...o,
  status: { ...(o["status"] as object), ...status }
})

describe("workload keys: which workload a change wakes", () => {
  it("a pod that turns Ready wakes only its own Deployment, through its ReplicaSet (no storm across 50 workloads)", () => {
    const { lookup, pods } = cluster()
    const p = pods[7 * 4 + 2]!
    const unready = withStatus(p, { conditions: [{ type: "Ready", status: "False" }] })
    expect(workloadKeysFor("pod", modified(unready, p), lookup)).toEqual(["Deployment:default/web7"])
    expect(workloadKeysFor("pod", added(p), lookup)).toEqual(["Deployment:default/web7"])
    expect(workloadKeysFor("pod", deleted(p), lookup)).toEqual(["Deployment:default/web7"])
  })

  it("a pod change pre-download does not read (status beyond phase and Ready) wakes nothing", () => {
    const { lookup, pods } = cluster()
    const p = pods[0]!
    expect(workloadKeysFor("pod", modified(p, withStatus(p, { podIP: "10.0.0.9" })), lookup)).toEqual([])
  })

  it("a pod moving to another node or revision wakes its workload", () => {
    const { lookup, pods } = cluster()
    const p = pods[0]!
    const moved = { ...p, spec: { ...(p["spec"] as object), nodeName: "n9" } }
    expect(workloadKeysFor("pod", modified(p, moved), lookup)).toEqual(["Deployment:default/web0"])
  })

  it("pods of a workload without the annotation, or without owner, wake nothing", () => {
    const { lookup, plainRs } = cluster()
    const p = pod(plainRs, "plain-1", { node: "n1", revisionLabel: "pod-template-hash", revision: "p" })
    expect(workloadKeysFor("pod", added(p), lookup)).toEqual([])
    const orphan = { ...p, metadata: { ...p.metadata, ownerReferences: [] } }
    expect(workloadKeysFor("pod", added(orphan), lookup)).toEqual([])
  })

  it("a pod whose ReplicaSet reference names another uid (a re-created ReplicaSet) wakes nothing", () => {
    const { lookup, replicaSets } = cluster()
    const stale = { ...replicaSets[3]!, metadata: { ...replicaSets[3]!.metadata, uid: "older" } }
    const p = pod(stale, "x", { node: "n1", revisionLabel: "pod-template-hash", revision: "h3" })
    expect(workloadKeysFor("pod", added(p), lookup)).toEqual([])
  })

  it("StatefulSet and DaemonSet pods wake their set directly", () => {
    const { ds, lookup, sts } = cluster()
    const a = pod(sts, "db-0", { node: "n1", revisionLabel: "controller-revision-hash", revision: "db-r1" })
    const b = pod(ds, "agent-x", { node: "n1", revisionLabel: "controller-revision-hash", revision: "h1" })
    expect(workloadKeysFor("pod", added(a), lookup)).toEqual(["StatefulSet:default/db"])
    expect(workloadKeysFor("pod", added(b), lookup)).toEqual(["DaemonSet:default/agent"])
  })

  it("a ReplicaSet's spec wakes its Deployment, its status does not", () => {
    const { deployments, lookup, replicaSets } = cluster()
    const rs = replicaSets[5]!
    const scaledDown = { ...rs, spec: { ...(rs["spec"] as object), replicas: 0 } }
    expect(workloadKeysFor("replicaSet", modified(rs, scaledDown), lookup)).toEqual(["Deployment:default/web5"])
    expect(workloadKeysFor("replicaSet", modified(rs, withStatus(rs, { readyReplicas: 3 })), lookup)).toEqual([])
    const next = replicaSet(deployments[5]!, "new", { replicas: 1, revision: 2, uid: "rsn" })
    expect(workloadKeysFor("replicaSet", added(next), lookup)).toEqual(["Deployment:default/web5"])
  })

  it("a ControllerRevision wakes its StatefulSet or DaemonSet", () => {
    const { ds, lookup, sts } = cluster()
    expect(workloadKeysFor("controllerRevision", added(controllerRevision(sts, "r2", { revision: 2 })), lookup)).toEqual([
      "StatefulSet:default/db"
    ])
    expect(workloadKeysFor("controllerRevision", added(controllerRevision(ds, "h2", { revision: 2 })), lookup)).toEqual([
      "DaemonSet:default/agent"
    ])
  })

  it("a pre-download job wakes its workload when it comes or goes, not on its status reports; other jobs never", () => {
    const { deployments, lookup } = cluster()
    const job: KubeObject = {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: {
        name: "web2-x-app",
        namespace: "default",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web2", uid: deployments[2]!.metadata.uid!, controller: true }]
      }
    }
    expect(workloadKeysFor("imagePullJob", added(job), lookup)).toEqual(["Deployment:default/web2"])
    expect(workloadKeysFor("imagePullJob", deleted(job), lookup)).toEqual(["Deployment:default/web2"])
    expect(workloadKeysFor("imagePullJob", modified(job, withStatus(job, { active: 1 })), lookup)).toEqual([])
    const child = {
      ...job,
      metadata: {
        ...job.metadata,
        ownerReferences: [{ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImageListPullJob", name: "l", uid: "u", controller: true }]
      }
    }
    expect(workloadKeysFor("imagePullJob", added(child), lookup)).toEqual([])
  })

  it("a job wakes its workload also once the annotation is gone (to be stopped)", () => {
    const { deployments, lookup } = cluster()
    const bare = { ...deployments[4]!, metadata: { ...deployments[4]!.metadata, annotations: {} } }
    const without: WorkloadLookup = { ...lookup, workload: (kind, key) => (key === "default/web4" ? bare : lookup.workload(kind, key)) }
    const job: KubeObject = {
      metadata: {
        name: "j",
        namespace: "default",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web4", uid: "d4", controller: true }]
      }
    }
    expect(workloadKeysFor("imagePullJob", added(job), without)).toEqual(["Deployment:default/web4"])
  })

  it("a workload's own change wakes it with the annotation, and when it loses it; never-annotated ones never", () => {
    const { deployments, plain } = cluster()
    const d = deployments[0]!
    const bare = { ...d, metadata: { ...d.metadata, annotations: {} } }
    expect(workloadChangeKeys("Deployment", added(d))).toEqual(["Deployment:default/web0"])
    expect(workloadChangeKeys("Deployment", modified(d, bare))).toEqual(["Deployment:default/web0"])
    expect(workloadChangeKeys("Deployment", modified(bare, bare))).toEqual([])
    expect(workloadChangeKeys("Deployment", added(plain))).toEqual([])
    expect(workloadChangeKeys("Deployment", deleted(d))).toEqual(["Deployment:default/web0"])
  })

  it("keys round-trip", () => {
    expect(parseWorkloadKey(workloadKey("StatefulSet", "ns", "db"))).toEqual({ kind: "StatefulSet", namespace: "ns", name: "db" })
  })
})
