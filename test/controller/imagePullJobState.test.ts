/**
 * The ImagePullJob reconciler's books (imagePullJob/state.ts): what a change of a job, a NodeImage
 * or a pod does to them, and which keys the update frees. The mappings beside them are pure
 * (watches.test.ts).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { JobProgress } from "../../src/controller/imagePullJob/progress.ts"
import { makeImagePullJobBooks } from "../../src/controller/imagePullJob/state.ts"
import { controllerStores } from "../../src/controller/stores.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import type { Change, StoreWriter } from "../../src/kube/store.ts"

const owner = (name: string) => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  name,
  namespace: "default",
  uid: `uid-${name}`
})

const job = (name: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: "1" },
  spec: { image: "nginx:1.25" }
})

const nodeImage = (
  name: string,
  version: number,
  options: { readonly owners?: ReadonlyArray<string>; readonly labels?: Record<string, string>; readonly generation?: number } = {}
): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name, resourceVersion: String(version), generation: options.generation ?? 1, labels: options.labels ?? {} },
  spec: {
    images: {
      nginx: {
        tags: (options.owners ?? []).map((o) => ({
          tag: `tag-${o}`,
          version: 0,
          imagePullPolicy: "IfNotPresent",
          ownerReferences: [owner(o)]
        }))
      }
    }
  }
})

const pod = (name: string, nodeName: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", resourceVersion: nodeName, labels: { app: "web" } },
  spec: { nodeName },
  status: { phase: "Running" }
})

const changesOf = <A>(store: StoreWriter<A>, ...objects: ReadonlyArray<KubeObject | string>): Array<Change<A>> => {
  const changes: Array<Change<A>> = []
  store.onChange((change) => Effect.sync(() => changes.push(change)))
  for (const object of objects) Effect.runSync(typeof object === "string" ? store.removed(object) : store.written(object))
  return changes
}

const withJobs = (...names: ReadonlyArray<string>) => {
  const stores = controllerStores()
  for (const name of names) Effect.runSync(stores.jobs.written(job(name)))
  return stores
}

const task = (name: string): JobTask => ({
  image: "nginx",
  tag: `tag-${name}`,
  owner: owner(name),
  imagePullPolicy: "IfNotPresent",
  pullSecrets: []
})

describe("the ImagePullJob books", () => {
  it("forget a deleted job entirely and name the jobs that waited for the registry room it held", () => {
    const books = makeImagePullJobBooks(1)
    const stores = controllerStores()
    const [added, deleted] = changesOf(stores.jobs, job("a"), "default/a")
    books.setTargets("default/a", new JobProgress("f", [], task("a"), () => undefined))
    books.setPropagated("default/a", "spec")
    books.setStatusWrittenAt("default/a", 1000)
    books.registries.settle("default/a", "docker.io", 1, 0)
    // b would start one node now but for the limit a holds.
    books.registries.settle("default/b", "docker.io", 0, 1)
    expect(books.jobChanged(added!)).toEqual([])
    expect(books.targets.has("default/a")).toBe(true)
    expect(books.jobChanged(deleted!)).toEqual(["default/b"])
    for (const book of [books.targets, books.propagated, books.statusWrittenAt]) expect(book.has("default/a")).toBe(false)
    expect(books.registries.inFlight("docker.io")).toBe(0)
  })

  it("hand back the jobs whose NodeImage write conflicted once its spec moved, not on a status report, and only once", () => {
    const books = makeImagePullJobBooks(undefined)
    const stores = withJobs("a", "b")
    books.awaitNewer("n1", "default/b")
    const [, report, specWrite, again] = changesOf(
      stores.nodeImages,
      nodeImage("n1", 1, { owners: ["a"] }),
      nodeImage("n1", 2, { owners: ["a"] }),
      nodeImage("n1", 3, { owners: ["a"], generation: 2 }),
      nodeImage("n1", 4, { owners: ["a"], generation: 3 })
    )
    // Their writes are tested on the generation: a report cannot make them go through.
    expect(books.nodeImageChanged(report!, stores.jobs)).toEqual([])
    expect(books.nodeImageChanged(specWrite!, stores.jobs)).toEqual(["default/b"])
    expect(books.nodeImageChanged(again!, stores.jobs)).toEqual([])
  })

  it("mark the targets whose tags changed on a NodeImage, so the next refresh reads that node again", () => {
    const books = makeImagePullJobBooks(undefined)
    const stores = withJobs("a", "b")
    const changes: Array<Change<NodeImage>> = []
    stores.nodeImages.onChange((change) => Effect.sync(() => changes.push(change)))
    Effect.runSync(stores.nodeImages.written(nodeImage("n1", 1, {})))
    books.nodeImageChanged(changes[0]!, stores.jobs)
    const lookup = (name: string) => stores.nodeImages.view(name)
    const progressA = new JobProgress("f", ["n1"], task("a"), lookup)
    const progressB = new JobProgress("f", ["n1"], task("b"), lookup)
    books.setTargets("default/a", progressA)
    books.setTargets("default/b", progressB)
    expect(progressA.synced).toBe(0)
    Effect.runSync(stores.nodeImages.written(nodeImage("n1", 2, { owners: ["a", "b"], generation: 2 })))
    books.nodeImageChanged(changes[1]!, stores.jobs)
    progressA.refresh(lookup)
    progressB.refresh(lookup)
    // Both tags arrived on n1: each progress sees its own.
    expect(progressA.synced).toBe(1)
    expect(progressB.synced).toBe(1)
  })

  it("count changes of the node set and of node labels, not of tags; and pods that moved, not those that did not", () => {
    const books = makeImagePullJobBooks(undefined)
    const stores = withJobs("a")
    const [added, tagged, relabelled, deleted] = changesOf(
      stores.nodeImages,
      nodeImage("n1", 1, {}),
      nodeImage("n1", 2, { owners: ["a"] }),
      nodeImage("n1", 3, { owners: ["a"], labels: { zone: "b" } }),
      "n1"
    )
    const counts = [added, tagged, relabelled, deleted].map((change) => {
      books.nodeImageChanged(change!, stores.jobs)
      return books.placement.nodes
    })
    expect(counts).toEqual([1, 1, 2, 3])
    const [placed, same, moved] = changesOf(
      stores.pods,
      pod("p", "n1"),
      { ...pod("p", "n1"), metadata: { ...pod("p", "n1").metadata, resourceVersion: "x" } },
      pod("p", "n2")
    )
    const podCounts = [placed, same, moved].map((change) => {
      books.podChanged(change!)
      return books.placement.pods
    })
    expect(podCounts).toEqual([1, 1, 2])
  })
})
