import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { InMemoryKubeApi, InMemoryKubeStore } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { Forbidden } from "../../src/kube/errors.ts"
import { advance, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"
import { controllerRevision, daemonSet, deployment, pod, replicaSet, statefulSet, template } from "../support/workloads.ts"

// The controller on the in-memory API server with simulated daemons, on simulated time. No
// workload controller runs here: each test makes the ReplicaSets, ControllerRevisions, pods and
// status that kube-controller-manager would, step by step.

const on = { "apps.kruise.io/image-predownload-parallelism": "2" }
const nodes = ["n1", "n2", "n3", "n4"].map((n) => readyNode(n))

const jobs = Effect.gen(function* () {
  const api = yield* KubeApi
  return (yield* api.list(resources.imagePullJob, { namespace: "default" })).items
})
const summary = (list: ReadonlyArray<KubeObject>) => list.map((j) => [j.metadata.name, (j["spec"] as { image: string }).image]).sort()
const statusOf = (o: KubeObject) => (o["status"] ?? {}) as Record<string, unknown>
const eventsAbout = (name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resources.event, { namespace: "default" })).items
      .filter((e) => (e["involvedObject"] as { name: string }).name === name)
      .map((e) => [e["type"], e["reason"], e["message"]])
  })
/** A pod as the kubelet reports it: created, then its status (phase, Ready) through the status subresource. */
const createPod = (object: KubeObject) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    yield* api.create(resources.pod, object)
    yield* api.patch(resources.pod, { name: object.metadata.name ?? "", namespace: "default" }, { status: object["status"] }, "status")
  })
type WorkloadResource = typeof resources.deployment | typeof resources.statefulSet | typeof resources.daemonSet
const at = (name: string) => ({ name, namespace: "default" })
const patchStatus = (resource: typeof resources.pod | WorkloadResource, name: string, status: Record<string, unknown>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    yield* api.patch(resource, at(name), { status }, "status")
  })
const setImages = (resource: WorkloadResource, name: string, app: string, images: Record<string, string>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return yield* api.patch(resource, { name, namespace: "default" }, { spec: { template: template(app, images) } })
  })

describe("workload-driven pre-pull, through the controller", () => {
  it.effect("Deployment: an image change pre-pulls on the nodes of the old pods; an Event; GC with the Deployment", () =>
    Effect.gen(function* () {
      const { pulls } = yield* startCluster(nodes, { pullMs: 2000 })
      const api = yield* KubeApi
      const d1 = yield* api.create(resources.deployment, deployment({ name: "web", images: { app: "web:1" }, annotations: on }))
      const old = yield* api.create(resources.replicaSet, replicaSet(d1, "aaa", { replicas: 4, revision: 1 }))
      for (const [i, node] of ["n1", "n2", "n3", "n4"].entries()) {
        yield* createPod(pod(old, `web-aaa-${i}`, { node, revisionLabel: "pod-template-hash", revision: "aaa" }))
      }
      yield* advance(2000)
      expect(yield* jobs).toEqual([]) // first creation: nothing to pre-pull

      // The rollout, as the deployment controller makes it with maxUnavailable 1: one old pod
      // goes (n4), then the new ReplicaSet and its pod there. The old pod's removal is seen first:
      // a pre-pull job that chooses its nodes while the pods store still holds it pulls on n4 too
      // (harmless, and only a matter of which reconcile runs first within one instant).
      yield* api.patch(resources.replicaSet, { name: "web-aaa", namespace: "default" }, { spec: { replicas: 3 } })
      yield* api.delete(resources.pod, { name: "web-aaa-3", namespace: "default" })
      yield* advance(100)
      const d2 = yield* setImages(resources.deployment, "web", "web", { app: "web:2" })
      const next = yield* api.create(resources.replicaSet, replicaSet(d2, "bbb", { replicas: 1, revision: 2 }))
      yield* createPod(pod(next, "web-bbb-0", { node: "n4", revisionLabel: "pod-template-hash", revision: "bbb" }))
      yield* advance(1000)
      const created = yield* jobs
      expect(summary(created)).toEqual([["web-bbb-app", "web:2"]])
      expect(created[0]!.metadata.ownerReferences).toEqual([
        { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: d1.metadata.uid, controller: true, blockOwnerDeletion: true }
      ])
      yield* advance(6000)
      const done = (yield* jobs)[0]!
      expect(statusOf(done)).toMatchObject({ desired: 3, succeeded: 3, failed: 0 })
      expect([...pulls.keys()].sort()).toEqual(["n1/web:2", "n2/web:2", "n3/web:2"])
      expect(yield* eventsAbout("web")).toContainEqual([
        "Normal",
        "CreatedImagePullJob",
        'created ImagePullJob web-bbb-app for image: "web:2"'
      ])

      yield* api.delete(resources.deployment, { name: "web", namespace: "default" })
      yield* advance(1000)
      expect(yield* jobs).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("StatefulSet: min-updated-ready-pods holds the pre-pull until that many pods of the update revision are Ready", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes, { pullMs: 2000 })
      const api = yield* KubeApi
      const gated = { ...on, "apps.kruise.io/image-predownload-min-updated-ready-pods": "1" }
      const s1 = yield* api.create(
        resources.statefulSet,
        statefulSet({ name: "db", replicas: 4, images: { db: "db:1" }, annotations: gated })
      )
      yield* api.create(resources.controllerRevision, controllerRevision(s1, "r1", { revision: 1 }))
      yield* patchStatus(resources.statefulSet, "db", { currentRevision: "db-r1", updateRevision: "db-r1", replicas: 4 })
      for (const i of [0, 1, 2, 3]) {
        yield* createPod(pod(s1, `db-${i}`, { node: `n${i + 1}`, revisionLabel: "controller-revision-hash", revision: "db-r1" }))
      }
      yield* advance(2000)
      expect(yield* jobs).toEqual([])

      const s2 = yield* setImages(resources.statefulSet, "db", "db", { db: "db:2" })
      yield* api.create(resources.controllerRevision, controllerRevision(s2, "r2", { revision: 2 }))
      yield* patchStatus(resources.statefulSet, "db", { updateRevision: "db-r2" })
      // The StatefulSet controller replaces the highest ordinal first; it is not Ready yet.
      yield* api.delete(resources.pod, { name: "db-3", namespace: "default" })
      yield* createPod(pod(s2, "db-3", { node: "n4", revisionLabel: "controller-revision-hash", revision: "db-r2", ready: false }))
      yield* advance(3000)
      expect(yield* jobs).toEqual([])
      yield* patchStatus(resources.pod, "db-3", { conditions: [{ type: "Ready", status: "True" }] })
      yield* advance(1000)
      expect(summary(yield* jobs)).toEqual([["db-r2-db", "db:2"]])
      yield* advance(6000)
      expect(statusOf((yield* jobs)[0]!)).toMatchObject({ desired: 3, succeeded: 3 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("DaemonSet: an edit before completion replaces the jobs; a removed annotation stops them", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes, { pullMs: 20_000 })
      const api = yield* KubeApi
      const annotations = { "apps.kruise.io/image-predownload-parallelism": "1" }
      const ds1 = yield* api.create(resources.daemonSet, daemonSet({ name: "agent", images: { agent: "agent:1" }, annotations }))
      yield* api.create(resources.controllerRevision, controllerRevision(ds1, "h1", { revision: 1 }))
      const scheduled = { desiredNumberScheduled: 4, currentNumberScheduled: 4, numberMisscheduled: 0, numberReady: 4 }
      yield* patchStatus(resources.daemonSet, "agent", scheduled)
      for (const i of [1, 2, 3, 4]) {
        yield* createPod(pod(ds1, `agent-${i}`, { node: `n${i}`, revisionLabel: "controller-revision-hash", revision: "h1" }))
      }
      yield* advance(2000)
      expect(yield* jobs).toEqual([])

      const ds2 = yield* setImages(resources.daemonSet, "agent", "agent", { agent: "agent:2" })
      yield* api.create(resources.controllerRevision, controllerRevision(ds2, "h2", { revision: 2 }))
      yield* advance(3000)
      expect(summary(yield* jobs)).toEqual([["agent-h2-agent", "agent:2"]])
      expect(statusOf((yield* jobs)[0]!)).toMatchObject({ active: 1, succeeded: 0 })

      // Edited again before any pod moved: agent:2's job goes, agent:3's comes.
      const ds3 = yield* setImages(resources.daemonSet, "agent", "agent", { agent: "agent:3" })
      yield* api.create(resources.controllerRevision, controllerRevision(ds3, "h3", { revision: 3 }))
      yield* advance(3000)
      expect(summary(yield* jobs)).toEqual([["agent-h3-agent", "agent:3"]])
      const events = yield* eventsAbout("agent")
      expect(events).toContainEqual([
        "Normal",
        "DeletedImagePullJob",
        "deleted ImagePullJob agent-h2-agent: the template changed again, to revision agent-h3"
      ])
      expect(events).toContainEqual(["Normal", "CreatedImagePullJob", 'created ImagePullJob agent-h3-agent for image: "agent:3"'])

      const removed = { metadata: { annotations: { "apps.kruise.io/image-predownload-parallelism": null } } }
      yield* api.patch(resources.daemonSet, at("agent"), removed)
      yield* advance(3000)
      expect(yield* jobs).toEqual([])
      expect(yield* eventsAbout("agent")).toContainEqual([
        "Normal",
        "DeletedImagePullJob",
        "deleted ImagePullJob agent-h3-agent: the pre-download annotation was removed"
      ])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a pod change reconciles only its own workload, among 20 annotated Deployments", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      for (const node of nodes) yield* api.create(resources.node, node)
      for (let i = 0; i < 20; i++) {
        const d = yield* api.create(resources.deployment, deployment({ name: `web${i}`, images: { app: "web:1" }, annotations: on }))
        const rs = yield* api.create(resources.replicaSet, replicaSet(d, `h${i}`, { replicas: 4, revision: 1 }))
        for (const j of [1, 2, 3, 4]) {
          yield* createPod(pod(rs, `web${i}-${j}`, { node: `n${j}`, revisionLabel: "pod-template-hash", revision: `h${i}` }))
        }
      }
      const started: Array<string> = []
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(
        controller.reconcile((name) => (name === "workload" ? { onStarted: (key) => Effect.sync(() => void started.push(key)) } : {}))
      )
      yield* advance(2000)
      expect(new Set(started).size).toBe(20)
      started.length = 0
      yield* patchStatus(resources.pod, "web7-2", { conditions: [{ type: "Ready", status: "False" }] })
      yield* patchStatus(resources.pod, "web7-2", { podIP: "10.0.0.7" })
      yield* api.patch(resources.pod, at("web7-2"), { metadata: { annotations: { note: "x" } } })
      yield* advance(2000)
      expect(started).toEqual(["Deployment:default/web7"])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a refused create is a Warning event on the workload, and is retried until it succeeds", () =>
    Effect.gen(function* () {
      yield* startCluster(nodes, { pullMs: 2000 })
      const api = yield* KubeApi
      const store = yield* InMemoryKubeStore
      const d1 = yield* api.create(resources.deployment, deployment({ name: "web", images: { app: "web:1" }, annotations: on }))
      const old = yield* api.create(resources.replicaSet, replicaSet(d1, "aaa", { replicas: 4, revision: 1 }))
      for (const i of [1, 2, 3, 4]) {
        yield* createPod(pod(old, `web-aaa-${i}`, { node: `n${i}`, revisionLabel: "pod-template-hash", revision: "aaa" }))
      }
      yield* store.setFault(({ resource, verb }) =>
        verb === "create" && resource.kind === "ImagePullJob"
          ? new Forbidden({ kind: "ImagePullJob", objectName: "web-bbb-app", verb, message: "quota exceeded" })
          : undefined
      )
      const d2 = yield* setImages(resources.deployment, "web", "web", { app: "web:2" })
      yield* api.create(resources.replicaSet, replicaSet(d2, "bbb", { replicas: 1, revision: 2 }))
      yield* advance(3000)
      expect(yield* jobs).toEqual([])
      expect(yield* eventsAbout("web")).toContainEqual([
        "Warning",
        "FailedCreateImagePullJob",
        "failed to create ImagePullJob web-bbb-app: quota exceeded"
      ])
      yield* store.setFault(undefined)
      yield* advance(30_000)
      expect(summary(yield* jobs)).toEqual([["web-bbb-app", "web:2"]])
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(InMemoryKubeApi.layerWith(), SchedulerLive.layer())))
  )

  it.effect(
    "a job the server rejects as invalid is a Warning event, not retried (the same template builds it again); an edit tries anew",
    () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        for (const node of nodes) yield* api.create(resources.node, node)
        const d1 = yield* api.create(resources.deployment, deployment({ name: "web", images: { app: "web:1" }, annotations: on }))
        const old = yield* api.create(resources.replicaSet, replicaSet(d1, "aaa", { replicas: 4, revision: 1 }))
        for (const i of [1, 2, 3, 4]) {
          yield* createPod(pod(old, `web-aaa-${i}`, { node: `n${i}`, revisionLabel: "pod-template-hash", revision: "aaa" }))
        }
        const started: Array<string> = []
        const controller = yield* makeController(defaultSettings)
        yield* Effect.forkScoped(
          controller.reconcile((name) => (name === "workload" ? { onStarted: (key) => Effect.sync(() => void started.push(key)) } : {}))
        )
        yield* advance(2000)
        // A container name no object name may carry: the pre-download job named after it is refused (422).
        const d2 = yield* setImages(resources.deployment, "web", "web", { Web_App: "web:2" })
        yield* api.create(resources.replicaSet, replicaSet(d2, "bbb", { replicas: 1, revision: 2 }))
        yield* advance(2000)
        expect(yield* jobs).toEqual([])
        const refused = (yield* eventsAbout("web")).filter(([, reason]) => reason === "FailedCreateImagePullJob")
        expect(refused.length).toBe(1)
        expect(String(refused[0]![2])).toMatch(/^failed to create ImagePullJob web-bbb-Web_App: .*metadata\.name/)
        started.length = 0
        yield* advance(60_000)
        expect(started).toEqual([])
        const d3 = yield* setImages(resources.deployment, "web", "web", { app: "web:3" })
        yield* api.create(resources.replicaSet, replicaSet(d3, "ccc", { replicas: 1, revision: 3 }))
        yield* advance(2000)
        expect(summary(yield* jobs)).toEqual([["web-ccc-app", "web:3"]])
      }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
