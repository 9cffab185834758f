import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { cronJobOfChild } from "../../src/controller/advancedCronJob/watches.ts"
import { listJobOfChild } from "../../src/controller/imageListPullJob/watches.ts"
import {
  jobForItself,
  jobsForCopy,
  jobsForNodeImage,
  jobsForPod,
  jobsReferencingSecrets
} from "../../src/controller/imagePullJob/watches.ts"
import { nodeImageForItself, nodeImagesOfDeletedJob, nodeImagesOfFinishedJob } from "../../src/controller/nodeImage/watches.ts"
import { nodeWarmingWatches } from "../../src/controller/nodeWarming/watches.ts"
import { allSecretCopies, copiesForCopy, copiesForJob } from "../../src/controller/pullSecrets/watches.ts"
import { controllerStores } from "../../src/controller/stores.ts"
import { controllerOf, itself, wake } from "../../src/controller/wake.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import type { Change, StoreWriter } from "../../src/kube/store.ts"
import type { WorkQueue } from "../../src/workqueue/Scheduler.ts"

const owner = (uid: string) => ({ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: uid, uid })

const job = (name: string, spec: Record<string, unknown>, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: "1", ...extra },
  spec: { image: "nginx:1.25", ...spec }
})

/** A NodeImage where each job named owns its own tag of nginx; `reports` are the tags' statuses. */
const nodeImage = (
  name: string,
  version: number,
  options: {
    readonly owners?: ReadonlyArray<string>
    readonly labels?: Record<string, string>
    readonly reports?: ReadonlyArray<Record<string, unknown>>
    readonly deleting?: boolean
    /** Moves with the spec only (the daemons' reports leave it). */
    readonly generation?: number
  } = {}
): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: {
    name,
    resourceVersion: String(version),
    generation: options.generation ?? 1,
    labels: options.labels ?? {},
    ...(options.deleting === true ? { deletionTimestamp: "2026-12-03T10:00:00Z" } : {})
  },
  spec: {
    images: {
      nginx: {
        tags: (options.owners ?? []).map((job) => ({
          tag: `tag-${job}`,
          version: 0,
          imagePullPolicy: "IfNotPresent",
          ownerReferences: [owner(`uid-${job}`)]
        }))
      }
    }
  },
  ...(options.reports === undefined ? {} : { status: { imageStatuses: { nginx: { tags: options.reports } } } })
})

/** Writes `objects` into the store in order and returns the changes it made. */
const changesOf = <A>(store: StoreWriter<A>, ...objects: ReadonlyArray<KubeObject | string>): Array<Change<A>> => {
  const changes: Array<Change<A>> = []
  store.onChange((change) => Effect.sync(() => changes.push(change)))
  for (const object of objects) Effect.runSync(typeof object === "string" ? store.removed(object) : store.written(object))
  return changes
}
const lastChange = <A>(store: StoreWriter<A>, ...objects: ReadonlyArray<KubeObject | string>): Change<A> =>
  changesOf(store, ...objects).at(-1)!

const withJobs = (...jobs: ReadonlyArray<KubeObject>) => {
  const stores = controllerStores()
  for (const j of jobs) Effect.runSync(stores.jobs.written(j))
  return stores
}
const sorted = (keys: Iterable<string>) => [...keys].sort()
const pulling = (job: string, progress: number) => ({ tag: `tag-${job}`, phase: "Pulling", version: 0, progress })
const succeeded = (job: string) => ({ tag: `tag-${job}`, phase: "Succeeded", version: 0 })

describe("a NodeImage change wakes (SPEC §4.8)", () => {
  const jobs = ["a", "b", "c"].map((name) => job(name, {}))

  it("only the owner of the tag whose outcome changed, not every job of the image", () => {
    const stores = withJobs(...jobs)
    const change = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a", "b", "c"], reports: [pulling("a", 10), pulling("b", 10)] }),
      nodeImage("n1", 2, { owners: ["a", "b", "c"], reports: [succeeded("a"), pulling("b", 10)] })
    )
    expect(sorted(jobsForNodeImage(change, stores.jobs))).toEqual(["default/a"])
    expect(nodeImageForItself(change)).toEqual(["n1"])
  })

  it("only the owner of a tag added or removed", () => {
    const stores = withJobs(...jobs)
    const change = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a", "b"] }),
      nodeImage("n1", 2, { owners: ["a", "b", "c"], generation: 2 })
    )
    expect(sorted(jobsForNodeImage(change, stores.jobs))).toEqual(["default/c"])
  })

  it("nothing for a progress report, neither a job nor the NodeImage itself", () => {
    const stores = withJobs(...jobs)
    const change = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a", "b"], reports: [pulling("a", 10), pulling("b", 0)] }),
      nodeImage("n1", 2, { owners: ["a", "b"], reports: [pulling("a", 60), pulling("b", 5)] })
    )
    expect(sorted(jobsForNodeImage(change, stores.jobs))).toEqual([])
    expect(nodeImageForItself(change)).toEqual([])
  })

  it("the owner of a tag whose attempt the registry throttled (each retry's report), not the NodeImage itself", () => {
    const stores = withJobs(...jobs)
    const throttled = (n: number) => ({
      ...pulling("a", 0),
      message: `RegistryThrottled: 429 Too Many Requests; retrying in 5s (throttled retry ${n} of 10)`
    })
    const first = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a", "b"], reports: [pulling("a", 0), pulling("b", 0)] }),
      nodeImage("n1", 2, { owners: ["a", "b"], reports: [throttled(1), pulling("b", 0)] })
    )
    expect(sorted(jobsForNodeImage(first, stores.jobs))).toEqual(["default/a"])
    expect(nodeImageForItself(first)).toEqual([])
    const again = lastChange(stores.nodeImages, nodeImage("n1", 3, { owners: ["a", "b"], reports: [throttled(2), pulling("b", 0)] }))
    expect(sorted(jobsForNodeImage(again, stores.jobs))).toEqual(["default/a"])
  })

  it("the owner of a failed tag its daemon marks for a credential provider answering anew, not the NodeImage itself", () => {
    const stores = withJobs(...jobs)
    const failed = (renewedAt?: string) => ({
      tag: "tag-a",
      phase: "Failed",
      version: 0,
      message: "401 Unauthorized",
      credentialProviders: [{ name: "ecr", ...(renewedAt === undefined ? {} : { renewedAt }) }]
    })
    const change = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a", "b"], reports: [failed(), pulling("b", 0)] }),
      nodeImage("n1", 2, { owners: ["a", "b"], reports: [failed("2026-12-03T10:00:00Z"), pulling("b", 0)] })
    )
    expect(sorted(jobsForNodeImage(change, stores.jobs))).toEqual(["default/a"])
    expect(nodeImageForItself(change)).toEqual([])
  })

  it("on a label change, only the jobs whose selection of the node changes", () => {
    const stores = withJobs(
      job("zone-a", { selector: { matchLabels: { zone: "a" } } }),
      job("zone-b", { selector: { matchLabels: { zone: "b" } } }),
      job("every", {}),
      job("named", { selector: { names: ["n1"] } }),
      job("by-pod", { podSelector: { matchLabels: { app: "web" } } })
    )
    const change = lastChange(
      stores.nodeImages,
      nodeImage("n1", 1, { labels: { zone: "a" } }),
      nodeImage("n1", 2, { labels: { zone: "b" } })
    )
    expect(sorted(jobsForNodeImage(change, stores.jobs))).toEqual(["default/zone-a", "default/zone-b"])
    expect(nodeImageForItself(change)).toEqual(["n1"])
  })

  it("when the node comes, or begins to go, every job that selects it by node", () => {
    const stores = withJobs(
      job("zone-a", { selector: { matchLabels: { zone: "a" } } }),
      job("zone-b", { selector: { matchLabels: { zone: "b" } } }),
      job("every", {}),
      job("by-pod", { podSelector: { matchLabels: { app: "web" } } })
    )
    const [added, deleting] = changesOf(
      stores.nodeImages,
      nodeImage("n1", 1, { labels: { zone: "a" } }),
      nodeImage("n1", 2, { labels: { zone: "a" }, deleting: true })
    )
    expect(sorted(jobsForNodeImage(added!, stores.jobs))).toEqual(["default/every", "default/zone-a"])
    expect(sorted(jobsForNodeImage(deleting!, stores.jobs))).toEqual(["default/every", "default/zone-a"])
  })
})

describe("a job change wakes", () => {
  it("the job itself while it exists", () => {
    const stores = controllerStores()
    const [added, deleted] = changesOf(stores.jobs, job("a", {}), "default/a")
    expect(jobForItself(added!)).toEqual(["default/a"])
    expect(jobForItself(deleted!)).toEqual([])
  })

  it("the NodeImages where a deleted job owns tags", () => {
    const stores = controllerStores()
    changesOf(stores.nodeImages, nodeImage("n1", 1, { owners: ["a"] }), nodeImage("n2", 1, { owners: ["b"] }))
    const [added, deleted] = changesOf(stores.jobs, job("a", {}), "default/a")
    expect(nodeImagesOfDeletedJob(added!, stores.nodeImages)).toEqual([])
    expect(nodeImagesOfDeletedJob(deleted!, stores.nodeImages)).toEqual(["n1"])
  })

  it("the list job that controls it, and a list job the cron job that created it", () => {
    const stores = controllerStores()
    const child = job("child", {}, { ownerReferences: [{ ...owner("l"), kind: "ImageListPullJob", name: "list", controller: true }] })
    expect(listJobOfChild(lastChange(stores.jobs, child))).toEqual(["default/list"])
    expect(listJobOfChild(lastChange(stores.jobs, job("plain", {})))).toEqual([])
    const scheduled: KubeObject = {
      kind: "ImageListPullJob",
      metadata: {
        name: "nightly-1",
        namespace: "default",
        resourceVersion: "1",
        ownerReferences: [{ ...owner("c"), kind: "AdvancedCronJob", name: "nightly", controller: true }]
      },
      spec: { images: ["nginx:1"] }
    }
    expect(cronJobOfChild(lastChange(stores.listJobs, scheduled))).toEqual(["default/nightly"])
  })

  it("the pull-secret copies when its pull secrets change or it goes, not on its status", () => {
    const stores = controllerStores()
    const a = job("a", { pullSecrets: ["reg"] })
    const [added, renamed, reported, deleted] = changesOf(
      stores.jobs,
      a,
      { ...a, metadata: { ...a.metadata, resourceVersion: "2" }, spec: { image: "nginx:1.25", pullSecrets: ["other"] } },
      {
        ...a,
        metadata: { ...a.metadata, resourceVersion: "3" },
        spec: { image: "nginx:1.25", pullSecrets: ["other"] },
        status: { active: 1 }
      },
      "default/a"
    )
    expect(copiesForJob(added!)).toEqual([allSecretCopies])
    expect(copiesForJob(renamed!)).toEqual([allSecretCopies])
    expect(copiesForJob(reported!)).toEqual([])
    expect(copiesForJob(deleted!)).toEqual([allSecretCopies])
  })

  it("the pull-secret copies, and the NodeImages of its tags, when a job with pull secrets completes (it releases them)", () => {
    const stores = controllerStores()
    Effect.runSync(stores.nodeImages.written(nodeImage("n1", 1, { owners: ["a", "plain"] })))
    const running = job("a", { pullSecrets: ["reg"] }, { resourceVersion: "2" })
    const [, completed, afterwards] = changesOf(
      stores.jobs,
      running,
      { ...running, metadata: { ...running.metadata, resourceVersion: "3" }, status: { completionTime: "2026-12-03T10:00:00Z" } },
      { ...running, metadata: { ...running.metadata, resourceVersion: "4" }, status: { completionTime: "2026-12-03T10:00:00Z", active: 0 } }
    )
    expect(copiesForJob(completed!)).toEqual([allSecretCopies])
    expect(nodeImagesOfFinishedJob(completed!, stores.nodeImages)).toEqual(["n1"])
    expect(copiesForJob(afterwards!)).toEqual([])
    expect(nodeImagesOfFinishedJob(afterwards!, stores.nodeImages)).toEqual([])
    // A job without pull secrets has no references to drop: its nodes are not woken.
    const plain = job("plain", {}, { resourceVersion: "5" })
    const [, plainDone] = changesOf(stores.jobs, plain, {
      ...plain,
      metadata: { ...plain.metadata, resourceVersion: "6" },
      status: { completionTime: "2026-12-03T10:00:00Z" }
    })
    expect(nodeImagesOfFinishedJob(plainDone!, stores.nodeImages)).toEqual([])
  })
})

describe("other changes wake", () => {
  it("the pull-secret copies for any change of a copy", () => {
    const stores = controllerStores()
    const copy: KubeObject = { kind: "Secret", metadata: { name: "default.reg", namespace: "preheat-daemon-config", resourceVersion: "1" } }
    expect(copiesForCopy(lastChange(stores.secretCopies, copy))).toEqual([allSecretCopies])
  })

  it("the jobs naming a source secret that changed", () => {
    const stores = withJobs(job("a", { pullSecrets: ["reg"] }), job("b", { pullSecrets: ["other"] }), job("c", {}))
    expect(jobsReferencingSecrets(new Set(["default/reg"]), stores.jobs)).toEqual(["default/a"])
  })

  it("the jobs naming a copy's source when its data comes or changes, not for its bookkeeping or its going", () => {
    const stores = withJobs(job("a", { pullSecrets: ["reg"] }), job("b", { pullSecrets: ["other"] }))
    const copy = (version: number, user: string, jobs: string): KubeObject => ({
      kind: "Secret",
      metadata: {
        name: "default.reg",
        namespace: "preheat-daemon-config",
        resourceVersion: String(version),
        annotations: { "imagepulljobs.kruise.io/source-key": "default/reg", "imagepulljobs.kruise.io/references": jobs }
      },
      data: { ".dockerconfigjson": user }
    })
    const [created, referenced, rotated, gone] = changesOf(
      stores.secretCopies,
      copy(1, "u1", "default/a"),
      copy(2, "u1", "default/a,default/c"),
      copy(3, "u2", "default/a,default/c"),
      "preheat-daemon-config/default.reg"
    )
    expect(jobsForCopy(created!, stores.jobs)).toEqual(["default/a"])
    expect(jobsForCopy(referenced!, stores.jobs)).toEqual([])
    expect(jobsForCopy(rotated!, stores.jobs)).toEqual(["default/a"])
    expect(jobsForCopy(gone!, stores.jobs)).toEqual([])
  })

  it("for a pod, the jobs of its namespace whose pod selector matches it, only when it moved", () => {
    const stores = withJobs(
      job("web", { podSelector: { matchLabels: { app: "web" } } }),
      job("db", { podSelector: { matchLabels: { app: "db" } } }),
      job("other-ns", { podSelector: { matchLabels: { app: "web" } } }, { namespace: "other", uid: "uid-o" }),
      job("by-node", {})
    )
    const pod = (version: number, nodeName: string | undefined, status: Record<string, unknown> = {}): KubeObject => ({
      kind: "Pod",
      metadata: { name: "p", namespace: "default", resourceVersion: String(version), labels: { app: "web" } },
      spec: nodeName === undefined ? {} : { nodeName },
      status
    })
    const [created, scheduled, ip] = changesOf(stores.pods, pod(1, undefined), pod(2, "n1"), pod(3, "n1", { podIP: "10.0.0.1" }))
    expect(jobsForPod(created!, stores.jobs)).toEqual(["default/web"])
    expect(jobsForPod(scheduled!, stores.jobs)).toEqual(["default/web"])
    expect(jobsForPod(ip!, stores.jobs)).toEqual([])
  })
})

describe("wake", () => {
  it("brings the books up to date before any key is added, then adds the books' and the watches' keys with their delays", () => {
    const added: Array<[string, unknown, number]> = []
    let notes = 0
    const queue = { add: (key: string, after?: unknown) => Effect.sync(() => added.push([key, after, notes])) } as unknown as WorkQueue
    const handler = wake<KubeObject>(
      [
        { queue, keys: () => ["x"] },
        { queue, keys: () => ["y", "z"], delayMs: 10 }
      ],
      [
        {
          queue,
          note: () => {
            notes++
            return ["freed"]
          },
          delayMs: 5
        },
        {
          queue,
          note: () => {
            notes++
            return []
          }
        }
      ]
    )
    Effect.runSync(handler({ type: "added", current: { raw: { metadata: {} }, view: { metadata: {} } } }))
    // Every add saw both notes done: a worker woken by a key reads books that show the change.
    expect(added).toEqual([
      ["freed", 5, 2],
      ["x", undefined, 2],
      ["y", 10, 2],
      ["z", 10, 2]
    ])
  })
})

describe("generic mappings", () => {
  const stored = (metadata: KubeObject["metadata"]) => ({ raw: { metadata }, view: undefined })
  it("itself: the changed object's key, also when it goes", () => {
    expect(itself({ type: "added", current: stored({ namespace: "ns", name: "a" }) })).toEqual(["ns/a"])
    expect(itself({ type: "deleted", old: stored({ name: "node-1" }) })).toEqual(["node-1"])
  })

  it("controllerOf: only the controlling owner of that kind, in the object's namespace", () => {
    const ownerReferences = [
      { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImageListPullJob", name: "plain-owner", uid: "1" },
      { apiVersion: "apps.kruise.io/v1alpha1", kind: "AdvancedCronJob", name: "other-kind", uid: "2", controller: true },
      { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImageListPullJob", name: "list", uid: "3", controller: true }
    ]
    const change: Change<undefined> = { type: "added", current: stored({ namespace: "ns", name: "child", ownerReferences }) }
    expect(controllerOf("ImageListPullJob")(change)).toEqual(["ns/list"])
    expect(controllerOf("Deployment")(change)).toEqual([])
  })
})

describe("the warm gate is woken (nodeWarming/watches.ts)", () => {
  const key = "preheat.kruise.io/warming"
  const queue = {} as WorkQueue
  const node = (name: string, taints: ReadonlyArray<Record<string, string>>, version = 1): KubeObject => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, resourceVersion: String(version) },
    spec: { taints }
  })
  const held = () => {
    const stores = controllerStores()
    Effect.runSync(stores.nodes.written(node("held", [{ key, effect: "NoSchedule" }])))
    Effect.runSync(stores.nodes.written(node("free", [{ key: "gpu", effect: "NoSchedule" }])))
    Effect.runSync(stores.nodes.written(node("other-effect", [{ key, effect: "NoExecute" }])))
    return { stores, watches: nodeWarmingWatches(queue, stores.nodes, key) }
  }

  it("by a NodeImage change only for a node the taint holds", () => {
    const { stores, watches } = held()
    const byNodeImage = watches.nodeImages[0]!
    expect([...byNodeImage.keys(lastChange(stores.nodeImages, nodeImage("held", 1, { owners: ["a"] })))]).toEqual(["held"])
    expect([...byNodeImage.keys(lastChange(stores.nodeImages, nodeImage("free", 1, { owners: ["a"] })))]).toEqual([])
  })

  it("by a job that comes, goes, changes its spec, annotation, end or validity, for the held nodes only", () => {
    const { stores, watches } = held()
    const byJob = watches.jobs[0]!
    const keys = (...objects: ReadonlyArray<KubeObject | string>) => [...byJob.keys(lastChange(stores.jobs, ...objects))]
    expect(keys(job("a", {}, { generation: 1 }))).toEqual(["held"])
    // A status write that moves only the counters is no news for the gate.
    expect(keys({ ...job("a", {}, { generation: 1, resourceVersion: "2" }), status: { active: 3 } })).toEqual([])
    const refused = { conditions: [{ type: "Valid", status: "False", reason: "X", lastTransitionTime: "2026-12-04T10:00:00Z" }] }
    expect(keys({ ...job("a", {}, { generation: 1, resourceVersion: "3" }), status: refused })).toEqual(["held"])
    expect(keys(job("a", {}, { generation: 1, resourceVersion: "4", annotations: { "preheat.kruise.io/warm-nodes": "true" } }))).toEqual([
      "held"
    ])
    expect(keys(job("a", {}, { generation: 2, resourceVersion: "5" }))).toEqual(["held"])
    expect(keys("default/a")).toEqual(["held"])
  })
})
