import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeImagePullJob } from "../../src/api/decode.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { parseSettings, scaled } from "../../src/controller/workload/annotations.ts"
import { createdEvent, decideWorkload, jobName } from "../../src/controller/workload/decide.ts"
import type { WorkloadInput } from "../../src/controller/workload/decide.ts"
import { rolloutOf } from "../../src/controller/workload/revisions.ts"
import type { Owned, WorkloadKind } from "../../src/controller/workload/revisions.ts"
import { controllerRevision, daemonSet, deployment, pod, replicaSet, statefulSet } from "../support/workloads.ts"

const on = { "apps.kruise.io/image-predownload-parallelism": "2" }
const minReady = "apps.kruise.io/image-predownload-min-updated-ready-pods"
const none = { create: [], delete: [], events: [], settled: undefined }

const input = (kind: WorkloadKind, workload: KubeObject, owned: Partial<Owned>, rest: Partial<WorkloadInput> = {}): WorkloadInput => {
  const all = { replicaSets: [], revisions: [], pods: [], ...owned }
  return { kind, workload, rollout: rolloutOf(kind, workload, all), jobs: [], settled: undefined, ...rest }
}

/** A Deployment edited from web:1 to web:2: the old ReplicaSet still runs 4 pods, the new one `ready` of 1. */
interface Rolling {
  readonly annotations?: Record<string, string>
  readonly ready?: number
  readonly spec?: Record<string, unknown>
  readonly replicas?: number
}
const rollingDeployment = (o: Rolling = {}) => {
  const d = deployment({
    name: "web",
    uid: "d-uid",
    images: { app: "web:2", sidecar: "proxy:1" },
    annotations: o.annotations ?? on,
    pullSecrets: ["regcred"],
    ...(o.replicas === undefined ? {} : { replicas: o.replicas }),
    ...(o.spec === undefined ? {} : { spec: o.spec })
  })
  const old = replicaSet(d, "aaa", { replicas: 4, revision: 1, images: { app: "web:1", sidecar: "proxy:1" }, uid: "rs-old" })
  const next = replicaSet(d, "bbb", { replicas: 1, revision: 2, uid: "rs-new" })
  const pods = [
    ...[1, 2, 3, 4].map((i) => pod(old, `web-aaa-${i}`, { node: `n${i}`, revisionLabel: "pod-template-hash", revision: "aaa" })),
    ...Array.from({ length: o.ready ?? 0 }, (_, i) =>
      pod(next, `web-bbb-${i}`, { node: `n${i + 1}`, revisionLabel: "pod-template-hash", revision: "bbb" })
    )
  ]
  return { d, old, next, pods }
}

/** What a created job looks like once stored (the decision's object, with a status). */
const stored = (job: KubeObject, status?: Record<string, unknown>): KubeObject => ({
  ...job,
  metadata: { ...job.metadata, uid: `${job.metadata.name}-uid` },
  ...(status === undefined ? {} : { status })
})

describe("workload pre-download: Deployment", () => {
  it("first creation: one ReplicaSet equal to the template, nothing to pre-pull", () => {
    const d = deployment({ name: "web", uid: "d-uid", images: { app: "web:1" }, annotations: on })
    const rs = replicaSet(d, "aaa", { replicas: 4, revision: 1 })
    const decision = decideWorkload(input("Deployment", d, { replicaSets: [rs] }))
    expect(decision).toEqual(none)
  })

  it("an image change: one job per new image, on the nodes of the pods not yet updated, owned by the Deployment", () => {
    const { d, next, old, pods } = rollingDeployment()
    const decision = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }))
    expect(decision.delete).toEqual([])
    expect(decision.events).toEqual([])
    expect(decision.settled).toBe("created:bbb")
    expect(decision.create).toHaveLength(1)
    const job = decision.create[0]!
    expect(job.metadata).toEqual({
      name: "web-bbb-app",
      namespace: "default",
      labels: { app: "web", "controller.kubernetes.io/hash": "bbb" },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "d-uid", controller: true, blockOwnerDeletion: true }
      ]
    })
    expect(job["spec"]).toEqual({
      image: "web:2",
      pullSecrets: ["regcred"],
      podSelector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "pod-template-hash", operator: "NotIn", values: ["bbb"] }] },
      parallelism: 2,
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 300 },
      completionPolicy: { type: "Always", ttlSecondsAfterFinished: 600 },
      sandboxConfig: { labels: { app: "web", "controller.kubernetes.io/hash": "bbb" } }
    })
    // A valid ImagePullJob by the project's own decoder (the API server checks the same through the CRD).
    expect(Result.isSuccess(decodeImagePullJob(job))).toBe(true)
    expect(createdEvent(job)).toEqual({
      type: "Normal",
      reason: "CreatedImagePullJob",
      message: 'created ImagePullJob web-bbb-app for image: "web:2"'
    })
  })

  it("the timeout annotation sets the pull timeout", () => {
    const { d, next, old, pods } = rollingDeployment({ annotations: { ...on, "apps.kruise.io/image-predownload-timeout-seconds": "90" } })
    const job = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods })).create[0]!
    expect((job["spec"] as { pullPolicy: unknown }).pullPolicy).toEqual({ backoffLimit: 1, timeoutSeconds: 90 })
  })

  it("only images no current revision runs; one job for an image two containers share; init containers count", () => {
    const d = deployment({ name: "web", uid: "d-uid", images: { app: "web:2", worker: "web:2", tool: "proxy:1" }, annotations: on })
    const withInit = {
      ...d,
      spec: {
        ...(d["spec"] as object),
        template: {
          ...(d["spec"] as { template: { spec: object } }).template,
          spec: { ...(d["spec"] as { template: { spec: object } }).template.spec, initContainers: [{ name: "init", image: "migrate:7" }] }
        }
      }
    }
    const old = replicaSet(withInit, "aaa", { replicas: 4, revision: 1, images: { app: "web:1", sidecar: "proxy:1" }, uid: "rs-old" })
    const next = replicaSet(withInit, "bbb", { replicas: 0, revision: 2, uid: "rs-new" })
    const decision = decideWorkload(input("Deployment", withInit, { replicaSets: [old, next] }))
    expect(decision.create.map((j) => [j.metadata.name, (j["spec"] as { image: string }).image])).toEqual([
      ["web-bbb-init", "migrate:7"],
      ["web-bbb-app", "web:2"]
    ])
  })

  it("once created for a revision, a job that went (TTL, by hand) is not made again", () => {
    const { d, next, old, pods } = rollingDeployment()
    const decision = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }, { settled: "created:bbb" }))
    expect(decision).toEqual({ create: [], delete: [], events: [], settled: "created:bbb" })
  })

  it("an existing job of the revision is not created twice (a new leader that remembers nothing)", () => {
    const { d, next, old, pods } = rollingDeployment()
    const first = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }))
    const again = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }, { jobs: first.create.map((j) => stored(j)) }))
    expect(again.create).toEqual([])
    expect(again.delete).toEqual([])
    expect(again.settled).toBe("created:bbb")
  })

  it("min-updated-ready-pods: waits for that many Ready pods of the update revision, a count or a percentage rounded up", () => {
    const gate = (value: string, ready: number, notReady = 0) => {
      const { d, next, old, pods } = rollingDeployment({
        annotations: { ...on, [minReady]: value },
        ready
      })
      const unready = Array.from({ length: notReady }, (_, i) =>
        pod(next, `web-bbb-x${i}`, { node: "n1", revisionLabel: "pod-template-hash", revision: "bbb", ready: false })
      )
      return decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods: [...pods, ...unready] }))
    }
    expect(gate("2", 1).create).toEqual([])
    expect(gate("2", 1).settled).toBeUndefined()
    expect(gate("2", 1, 3).create).toEqual([])
    expect(gate("2", 2).create).toHaveLength(1)
    // 4 replicas: 50% is 2, 26% rounds up to 2, 25% is 1
    expect(gate("50%", 1).create).toEqual([])
    expect(gate("50%", 2).create).toHaveLength(1)
    expect(gate("26%", 1).create).toEqual([])
    expect(gate("25%", 1).create).toHaveLength(1)
    expect(gate("0", 0).create).toHaveLength(1)
  })

  it("the gate holds no more once the revision's jobs exist (a pod that turns unready stops nothing)", () => {
    const { d, next, old, pods } = rollingDeployment({ annotations: { ...on, [minReady]: "1" } })
    const job = stored({ ...rollingJob(d, "bbb", "app") })
    const decision = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }, { jobs: [job] }))
    expect(decision.delete).toEqual([])
    expect(decision.settled).toBe("created:bbb")
  })

  it("an edit before completion replaces the jobs: the older revision's go, the new revision's come", () => {
    const { d, old } = rollingDeployment()
    const images = { app: "web:3", sidecar: "proxy:1" }
    const edited = deployment({ name: "web", uid: "d-uid", images, annotations: on, pullSecrets: ["regcred"] })
    const middle = replicaSet(d, "bbb", { replicas: 1, revision: 2, uid: "rs-mid" })
    const newest = replicaSet(edited, "ccc", { replicas: 0, revision: 3, uid: "rs-newest" })
    const earlier = stored(rollingJob(d, "bbb", "app"), { active: 1 })
    const owned = { replicaSets: [old, middle, newest] }
    const decision = decideWorkload(input("Deployment", edited, owned, { jobs: [earlier], settled: "created:bbb" }))
    expect(decision.delete).toEqual(["web-bbb-app"])
    expect(decision.create.map((j) => [j.metadata.name, (j["spec"] as { image: string }).image])).toEqual([["web-ccc-app", "web:3"]])
    expect(decision.events).toEqual([
      {
        type: "Normal",
        reason: "DeletedImagePullJob",
        message: "deleted ImagePullJob web-bbb-app: the template changed again, to revision web-ccc"
      }
    ])
    expect(decision.settled).toBe("created:ccc")
  })

  it("a removed annotation deletes the unfinished jobs only, and forgets", () => {
    const { d, next, old, pods } = rollingDeployment({ annotations: {} })
    const active = stored(rollingJob(d, "bbb", "app"), { active: 2 })
    const done = stored(rollingJob(d, "bbb", "sidecar"), { completionTime: "2026-12-03T00:00:00Z" })
    const owned = { replicaSets: [old, next], pods }
    const decision = decideWorkload(input("Deployment", d, owned, { jobs: [active, done], settled: "created:bbb" }))
    expect(decision.create).toEqual([])
    expect(decision.delete).toEqual(["web-bbb-app"])
    expect(decision.events.map((e) => e.message)).toEqual(["deleted ImagePullJob web-bbb-app: the pre-download annotation was removed"])
    expect(decision.settled).toBeUndefined()
  })

  it("a completed rollout (no other revision has replicas) deletes the jobs, as upstream once revisions are consistent", () => {
    const { d, next, old } = rollingDeployment()
    const scaledDown = { ...old, spec: { ...(old["spec"] as object), replicas: 0 } }
    const job = stored(rollingJob(d, "bbb", "app"), { completionTime: "2026-12-03T00:00:00Z" })
    const decision = decideWorkload(input("Deployment", d, { replicaSets: [scaledDown, next] }, { jobs: [job], settled: "created:bbb" }))
    expect(decision.delete).toEqual(["web-bbb-app"])
    expect(decision.create).toEqual([])
    expect(decision.settled).toBeUndefined()
  })

  it("no ReplicaSet for the template yet: waits", () => {
    const { d, old } = rollingDeployment()
    expect(decideWorkload(input("Deployment", d, { replicaSets: [old] }))).toEqual(none)
  })

  it("a workload being deleted is left to garbage collection", () => {
    const { d, next, old, pods } = rollingDeployment()
    const going = { ...d, metadata: { ...d.metadata, deletionTimestamp: "2026-12-03T00:00:00Z" } }
    expect(decideWorkload(input("Deployment", going, { replicaSets: [old, next], pods })).create).toEqual([])
  })

  it("an invalid annotation is a Warning event, once, and pulls nothing", () => {
    const { d, next, old, pods } = rollingDeployment({ annotations: { "apps.kruise.io/image-predownload-parallelism": "ten" } })
    const first = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }))
    expect(first.create).toEqual([])
    expect(first.events).toEqual([
      {
        type: "Warning",
        reason: "InvalidPreDownload",
        message: 'apps.kruise.io/image-predownload-parallelism: "ten" is not a positive integer'
      }
    ])
    const second = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }, { settled: first.settled }))
    expect(second.events).toEqual([])
  })

  it.each([
    ["Recreate", { strategy: { type: "Recreate" } }, 4, "the Recreate strategy replaces every pod at once"],
    ["3 replicas", {}, 3, "3 replicas: pre-download starts above 3"],
    [
      "maxUnavailable 100%",
      { strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "100%" } } },
      4,
      "every pod is updated in one batch (maxUnavailable 4 >= replicas 4)"
    ]
  ])("skipped as upstream skips it: %s (one Normal event per revision)", (_name, spec, replicas, why) => {
    const { d, next, old, pods } = rollingDeployment({ spec, replicas })
    const first = decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }))
    expect(first.create).toEqual([])
    const message = `no image pre-download for revision web-bbb: ${why}`
    expect(first.events).toEqual([{ type: "Normal", reason: "SkippedImagePullJob", message }])
    expect(decideWorkload(input("Deployment", d, { replicaSets: [old, next], pods }, { settled: first.settled })).events).toEqual([])
  })
})

/** The job a decision made earlier for (revision hash, container) of the Deployment fixture. */
const rollingJob = (d: KubeObject, hash: string, container: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: {
    name: jobName(`web-${hash}`, container),
    namespace: "default",
    labels: { app: "web", "controller.kubernetes.io/hash": hash },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: d.metadata.uid ?? "", controller: true }]
  },
  spec: { image: "web:2" }
})

describe("workload pre-download: StatefulSet", () => {
  const rolling = (status: { currentRevision: string; updateRevision: string }, spec: Record<string, unknown> = {}) => {
    const set = statefulSet({ name: "db", uid: "s-uid", images: { db: "db:2" }, annotations: on, status, spec })
    const revisions = [
      controllerRevision(set, "r1", { revision: 1, images: { db: "db:1" } }),
      controllerRevision(set, "r2", { revision: 2 })
    ]
    const pods = [0, 1, 2, 3].map((i) =>
      pod(set, `db-${i}`, { node: `n${i}`, revisionLabel: "controller-revision-hash", revision: i === 3 ? "db-r2" : "db-r1" })
    )
    return { set, revisions, pods }
  }

  it("from status.currentRevision to status.updateRevision: the job is REVISION-CONTAINER, excluding pods on the update revision", () => {
    const { pods, revisions, set } = rolling({ currentRevision: "db-r1", updateRevision: "db-r2" })
    const decision = decideWorkload(input("StatefulSet", set, { revisions, pods }))
    expect(decision.create.map((j) => j.metadata.name)).toEqual(["db-r2-db"])
    expect((decision.create[0]!["spec"] as { podSelector: unknown }).podSelector).toEqual({
      matchLabels: { app: "db" },
      matchExpressions: [{ key: "controller-revision-hash", operator: "NotIn", values: ["db-r2", "r2"] }]
    })
    expect(decision.create[0]!.metadata.ownerReferences?.[0]).toMatchObject({ kind: "StatefulSet", uid: "s-uid", controller: true })
  })

  it("min-updated-ready-pods counts the pods labelled with the update revision", () => {
    const { pods, revisions, set } = rolling({ currentRevision: "db-r1", updateRevision: "db-r2" })
    const gated = { ...set, metadata: { ...set.metadata, annotations: { ...on, [minReady]: "2" } } }
    expect(decideWorkload(input("StatefulSet", gated, { revisions, pods })).create).toEqual([])
    const more = [...pods, pod(set, "db-4", { node: "n4", revisionLabel: "controller-revision-hash", revision: "db-r2" })]
    expect(decideWorkload(input("StatefulSet", gated, { revisions, pods: more })).create).toHaveLength(1)
  })

  it("current = update: nothing to pull, jobs go", () => {
    const { pods, revisions, set } = rolling({ currentRevision: "db-r2", updateRevision: "db-r2" })
    const job = { ...rollingJob(set, "r2", "db"), metadata: { ...rollingJob(set, "r2", "db").metadata, name: "db-r2-db" } }
    const decision = decideWorkload(input("StatefulSet", set, { revisions, pods }, { jobs: [job] }))
    expect(decision.create).toEqual([])
    expect(decision.delete).toEqual(["db-r2-db"])
  })

  it("OnDelete is skipped, as upstream", () => {
    const status = { currentRevision: "db-r1", updateRevision: "db-r2" }
    const { pods, revisions, set } = rolling(status, { updateStrategy: { type: "OnDelete" } })
    const decision = decideWorkload(input("StatefulSet", set, { revisions, pods }))
    expect(decision.create).toEqual([])
    expect(decision.events[0]?.reason).toBe("SkippedImagePullJob")
  })

  it("an update revision whose ControllerRevision is not there yet: waits", () => {
    const { pods, revisions, set } = rolling({ currentRevision: "db-r1", updateRevision: "db-r3" })
    expect(decideWorkload(input("StatefulSet", set, { revisions, pods })).create).toEqual([])
  })
})

describe("workload pre-download: DaemonSet", () => {
  const rolling = (onNew: number, status: Record<string, unknown> = { desiredNumberScheduled: 4 }, annotations = on) => {
    const set = daemonSet({ name: "agent", uid: "ds-uid", images: { agent: "agent:2" }, annotations, status })
    const revisions = [
      controllerRevision(set, "h1", { revision: 1, images: { agent: "agent:1" } }),
      controllerRevision(set, "h2", { revision: 2 })
    ]
    const pods = [0, 1, 2, 3].map((i) =>
      pod(set, `agent-${i}`, { node: `n${i}`, revisionLabel: "controller-revision-hash", revision: i < onNew ? "h2" : "h1" })
    )
    return { set, revisions, pods }
  }

  it("the newest ControllerRevision against the ones pods run", () => {
    const { pods, revisions, set } = rolling(1)
    const decision = decideWorkload(input("DaemonSet", set, { revisions, pods }))
    expect(decision.create.map((j) => [j.metadata.name, (j["spec"] as { image: string }).image])).toEqual([["agent-h2-agent", "agent:2"]])
    expect((decision.create[0]!["spec"] as { podSelector: unknown }).podSelector).toEqual({
      matchLabels: { app: "agent" },
      matchExpressions: [{ key: "controller-revision-hash", operator: "NotIn", values: ["agent-h2", "h2"] }]
    })
  })

  it("every pod on the newest revision: nothing (an old revision no pod runs is not current)", () => {
    const { pods, revisions, set } = rolling(4)
    expect(decideWorkload(input("DaemonSet", set, { revisions, pods }))).toEqual(none)
  })

  it("min-updated-ready-pods as a percentage of desiredNumberScheduled", () => {
    const gated = { ...on, [minReady]: "50%" }
    const one = rolling(1, { desiredNumberScheduled: 4 }, gated)
    expect(decideWorkload(input("DaemonSet", one.set, { revisions: one.revisions, pods: one.pods })).create).toEqual([])
    const two = rolling(2, { desiredNumberScheduled: 4 }, gated)
    expect(decideWorkload(input("DaemonSet", two.set, { revisions: two.revisions, pods: two.pods })).create).toHaveLength(1)
  })
})

describe("pre-download annotations", () => {
  it("parse as upstream's keys, refusing what upstream would silently replace", () => {
    expect(parseSettings({})).toEqual({ _tag: "Off" })
    expect(parseSettings({ ...on, [minReady]: "10%" })).toEqual({
      _tag: "On",
      settings: { parallelism: 2, minUpdatedReadyPods: "10%", timeoutSeconds: 300 }
    })
    expect(parseSettings({ "apps.kruise.io/image-predownload-parallelism": "0" })._tag).toBe("Invalid")
    expect(parseSettings({ ...on, [minReady]: "x" })._tag).toBe("Invalid")
    expect(parseSettings({ ...on, "apps.kruise.io/image-predownload-timeout-seconds": "-1" })._tag).toBe("Invalid")
  })

  it("scale as apimachinery's GetScaledValueFromIntOrPercent", () => {
    expect(scaled("25%", 4, false)).toBe(1)
    expect(scaled("25%", 5, false)).toBe(1)
    expect(scaled("25%", 5, true)).toBe(2)
    expect(scaled(3, 10, true)).toBe(3)
  })
})
