/**
 * The dev cluster's workload stand-ins on the in-memory API server and fake node runtimes (real
 * time, short pulls): a Deployment's pods are scheduled, started through each node's runtime
 * (a node that has the image starts its pod without a pull), and a template change rolls to a
 * new ReplicaSet; a StatefulSet replaces its pods from the highest ordinal down; a DaemonSet
 * covers the matching nodes and rolls to a new controller-revision-hash. A node whose runtime is
 * not in this process (`preheat apiserver --workloads`) gets its pod bound, and left Pending.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Stream } from "effect"
import { makeSimulatedRuntime } from "../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { SimulatedRuntimeHandle } from "../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { InMemoryKubeApi } from "../../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../../layers/scheduler.ts"
import { startWorkloads } from "../../../harness/cluster/workloadStandIns/workloads.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"

const layer = Layer.mergeAll(InMemoryKubeApi.layer, SchedulerLive.layer())

const node = (name: string, arch: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/arch": arch } },
  status: { conditions: [{ type: "Ready", status: "True" }] }
})

const workload = (kind: "Deployment" | "StatefulSet" | "DaemonSet", name: string, image: string, extra: object = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name, namespace: "default" },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image }] } },
    ...extra
  }
})

/** Polls until `check` gives a value (10 s at most). */
const until = <A>(what: string, check: Effect.Effect<A | undefined, unknown, KubeApi>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep(Duration.millis(20))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

const list = (resource: (typeof resources)[keyof typeof resources], labelSelector: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resource, { namespace: "default", labelSelector })).items
  })

const labels = (o: KubeObject) => o.metadata.labels ?? {}
const spec = (o: KubeObject) => o["spec"] as Record<string, any>
const status = (o: KubeObject) => (o["status"] ?? {}) as Record<string, any>

/** Two nodes: node-1 (amd64) already has nginx:1.27.0, node-2 (arm64) has nothing; pulls take 200 ms. */
const cluster = Effect.gen(function* () {
  const api = yield* KubeApi
  const runtimes = new Map<string, SimulatedRuntimeHandle>()
  for (const [name, arch] of [
    ["node-1", "amd64"],
    ["node-2", "arm64"]
  ] as const) {
    yield* api.create(resources.node, node(name, arch))
    runtimes.set(name, yield* makeSimulatedRuntime({ latency: Duration.millis(200) }))
  }
  yield* runtimes.get("node-1")!.addImage({ references: ["docker.io/library/nginx:1.27.0"], id: "sha256:aa" })
  yield* startWorkloads(new Map([...runtimes].map(([name, handle]) => [name, handle.runtime])))
  return runtimes
})

describe("dev cluster workloads", () => {
  it.live("run a Deployment's pods through the nodes' runtimes and roll it to a new ReplicaSet", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      // Every version of the pods, as any watcher sees them.
      const versions: Array<KubeObject> = []
      const from = (yield* api.list(resources.pod, { namespace: "default" })).resourceVersion
      yield* api.watch(resources.pod, { namespace: "default", resourceVersion: from }).pipe(
        Stream.runForEach((e) => Effect.sync(() => e.type !== "BOOKMARK" && versions.push(e.object))),
        Effect.forkScoped
      )
      const runtimes = yield* cluster
      yield* api.create(resources.deployment, workload("Deployment", "web", "nginx:1.27.0", { replicas: 2 }))
      const ready = yield* until(
        "web rolled out",
        Effect.map(api.get(resources.deployment, { namespace: "default", name: "web" }), (d) =>
          status(d)["updatedReplicas"] === 2 && status(d)["availableReplicas"] === 2 ? d : undefined
        )
      )
      expect(status(ready)["conditions"]).toMatchObject([
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }
      ])
      const pods = yield* list(resources.pod, "app=web")
      expect(pods.map((p) => spec(p)["nodeName"]).sort()).toEqual(["node-1", "node-2"])
      // node-1 had the image: no pull there; node-2 pulled it through its own runtime.
      expect(yield* runtimes.get("node-1")!.pulls).toHaveLength(0)
      expect((yield* runtimes.get("node-2")!.pulls).map((p) => p.image)).toEqual(["nginx:1.27.0"])
      const events = (yield* api.list(resources.event, { namespace: "default", fieldSelector: "reason=Pulled" })).items
      const messageFor = (nodeName: string) => {
        const pod = pods.find((p) => spec(p)["nodeName"] === nodeName)!
        return events.find((e) => (e["involvedObject"] as { name: string }).name === pod.metadata.name)?.["message"]
      }
      expect(messageFor("node-1")).toBe(`Container image "nginx:1.27.0" already present on machine`)
      expect(messageFor("node-2")).toMatch(
        /^Successfully pulled image "nginx:1\.27\.0" in \d+ms \(\d+ms including waiting\)\. Image size: \d+ bytes\.$/
      )
      for (const pod of pods) {
        const running = { phase: "Running", containerStatuses: [{ image: "docker.io/library/nginx:1.27.0", ready: true }] }
        expect(status(pod)).toMatchObject(running)
      }
      // A pod on a node is already scheduled: the binding is seen with its PodScheduled condition, as
      // pods/binding writes both at once. A condition written after the node could land after the
      // kubelet's Running status and set its phase back to Pending (the kubelet then started the pod twice).
      const bound = versions.filter((v) => spec(v)["nodeName"] !== undefined)
      expect(bound.length).toBeGreaterThan(0)
      for (const v of bound)
        expect(status(v)["conditions"]).toContainEqual(expect.objectContaining({ type: "PodScheduled", status: "True" }))
      expect(events.filter((e) => e["reason"] === "Pulled")).toHaveLength(2)

      const [first] = yield* list(resources.replicaSet, "app=web")
      yield* api.patch(
        resources.deployment,
        { namespace: "default", name: "web" },
        {
          spec: { template: { spec: { containers: [{ name: "c", image: "nginx:1.28.0" }] } } }
        }
      )
      yield* until(
        "web rolled to the new template",
        Effect.gen(function* () {
          const sets = yield* list(resources.replicaSet, "app=web")
          const next = sets.find((s) => s.metadata.name !== first!.metadata.name)
          const newPods = yield* list(resources.pod, "app=web")
          return next !== undefined &&
            spec(next)["replicas"] === 2 &&
            status(next)["availableReplicas"] === 2 &&
            spec(sets.find((s) => s.metadata.name === first!.metadata.name)!)["replicas"] === 0 &&
            newPods.length === 2 &&
            newPods.every((p) => labels(p)["pod-template-hash"] === labels(next)["pod-template-hash"])
            ? true
            : undefined
        })
      )
    }).pipe(Effect.scoped, Effect.provide(layer))
  )

  it.live("replace StatefulSet pods from the highest ordinal down and run DaemonSet pods on matching nodes", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* cluster
      yield* api.create(resources.statefulSet, workload("StatefulSet", "db", "redis:7.2", { replicas: 3 }))
      yield* api.create(
        resources.daemonSet,
        workload("DaemonSet", "agent", "busybox:1.36", {
          template: {
            metadata: { labels: { app: "agent" } },
            spec: { nodeSelector: { "kubernetes.io/arch": "amd64" }, containers: [{ name: "c", image: "busybox:1.36" }] }
          }
        })
      )
      const revisionOf = (name: string) => Effect.map(api.get(resources.statefulSet, { namespace: "default", name }), (s) => status(s))
      const first = yield* until(
        "db ready",
        Effect.map(revisionOf("db"), (s) => (s["readyReplicas"] === 3 ? s : undefined))
      )
      const started = new Map((yield* list(resources.pod, "app=db")).map((p) => [p.metadata.name, p.metadata.creationTimestamp]))
      expect([...started.keys()].sort()).toEqual(["db-0", "db-1", "db-2"])

      // Watch the order: each replacement pod is created only after the one above it is back and Ready.
      const order: Array<string> = []
      const from = (yield* api.list(resources.pod, { namespace: "default" })).resourceVersion
      yield* api.watch(resources.pod, { namespace: "default", labelSelector: "app=db", resourceVersion: from }).pipe(
        Stream.runForEach((e) =>
          Effect.sync(() => {
            if (e.type === "ADDED") order.push(e.object.metadata.name ?? "")
          })
        ),
        Effect.forkScoped
      )
      yield* api.patch(
        resources.statefulSet,
        { namespace: "default", name: "db" },
        {
          spec: { template: { spec: { containers: [{ name: "c", image: "redis:7.4" }] } } }
        }
      )
      const done = yield* until(
        "db rolled",
        Effect.map(revisionOf("db"), (s) =>
          s["updateRevision"] !== first["updateRevision"] &&
          s["currentRevision"] === s["updateRevision"] &&
          s["updatedReplicas"] === 3 &&
          s["readyReplicas"] === 3
            ? s
            : undefined
        )
      )
      expect(order).toEqual(["db-2", "db-1", "db-0"])
      expect(done["updateRevision"]).not.toBe(first["updateRevision"])
      const revisions = yield* list(resources.controllerRevision, "app=db")
      expect(revisions.map((r) => [r.metadata.name, r["revision"]]).sort()).toEqual(
        [
          [first["updateRevision"], 1],
          [done["updateRevision"], 2]
        ].sort()
      )

      const agents = yield* until(
        "agent on node-1",
        Effect.map(list(resources.pod, "app=agent"), (pods) =>
          pods.length === 1 && status(pods[0]!)["phase"] === "Running" ? pods : undefined
        )
      )
      expect(spec(agents[0]!)["nodeName"]).toBe("node-1")
      const hash = labels(agents[0]!)["controller-revision-hash"]
      const [revision] = yield* list(resources.controllerRevision, "app=agent")
      expect(revision!.metadata.name).toBe(`agent-${hash}`)
    }).pipe(Effect.scoped, Effect.provide(layer))
  )

  it.live("bind a pod to a node whose runtime is elsewhere, and leave it Pending, unwritten", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* cluster
      yield* api.create(resources.node, node("node-elsewhere", "s390x"))
      const nodeSelector = { "kubernetes.io/arch": "s390x" }
      yield* api.create(
        resources.deployment,
        workload("Deployment", "away", "nginx:1.27.0", {
          replicas: 1,
          template: { metadata: { labels: { app: "away" } }, spec: { nodeSelector, containers: [{ name: "c", image: "nginx:1.27.0" }] } }
        })
      )
      const [bound] = yield* until(
        "the pod bound",
        Effect.map(list(resources.pod, "app=away"), (pods) =>
          pods[0] !== undefined && spec(pods[0])["nodeName"] !== undefined ? pods : undefined
        )
      )
      expect(spec(bound!)["nodeName"]).toBe("node-elsewhere")
      // The scheduler's own status write lands with the binding; after it, no kubelet here writes.
      const scheduled = yield* until(
        "PodScheduled=True",
        Effect.map(list(resources.pod, "app=away"), ([pod]) =>
          (status(pod!)["conditions"] ?? []).some((c: any) => c.type === "PodScheduled" && c.status === "True") ? pod : undefined
        )
      )
      yield* Effect.sleep(Duration.millis(500))
      const [later] = yield* list(resources.pod, "app=away")
      expect(status(later!)["phase"]).toBe("Pending")
      expect(status(later!)["containerStatuses"]).toBeUndefined()
      expect(later!.metadata.resourceVersion).toBe(scheduled.metadata.resourceVersion)
      const kubelet = (yield* api.list(resources.event, { namespace: "default" })).items.filter(
        (e) =>
          (e["involvedObject"] as { name: string }).name === later!.metadata.name &&
          (e["source"] as { component: string }).component === "kubelet"
      )
      expect(kubelet).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(layer))
  )
})
