import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { deletedUidsKept, KeysBy, makeStore } from "../../src/kube/store.ts"

const replicaSet = (name: string, version: number, owners: ReadonlyArray<string>): KubeObject => ({
  metadata: {
    name,
    namespace: "default",
    resourceVersion: String(version),
    ownerReferences: owners.map((uid) => ({ apiVersion: "apps/v1", kind: "Deployment", name: uid, uid }))
  }
})

describe("a store's declared index", () => {
  it("follows every write: added, moved to another value, kept in place, forgotten", () => {
    const store = makeStore(resources.replicaSet, {
      indexes: { owner: new KeysBy<KubeObject>(({ raw }) => (raw.metadata.ownerReferences ?? []).map((o) => o.uid ?? "")) }
    })
    const owner = store.indexes.owner
    const run = (effect: Effect.Effect<void>) => Effect.runSync(effect)
    run(store.listed([replicaSet("a", 1, ["d1"]), replicaSet("b", 1, ["d1"]), replicaSet("c", 1, ["d2"])]))
    expect([...owner.keys("d1")]).toEqual(["default/a", "default/b"])
    // A version that keeps its owner keeps its place (the order the store holds them in).
    run(store.written(replicaSet("a", 2, ["d1"])))
    expect([...owner.keys("d1")]).toEqual(["default/a", "default/b"])
    run(store.written(replicaSet("b", 2, ["d2"])))
    expect([...owner.keys("d1")]).toEqual(["default/a"])
    expect([...owner.keys("d2")]).toEqual(["default/c", "default/b"])
    run(store.removed("default/c"))
    run(store.listed([replicaSet("b", 2, ["d2"])]))
    expect([...owner.keys("d1")]).toEqual([])
    expect([...owner.keys("d2")]).toEqual(["default/b"])
  })
})

describe("what a store keeps of an object", () => {
  it("everything but metadata.managedFields, from a list and from a write, and the view is made of that", () => {
    const seen: Array<KubeObject> = []
    const store = makeStore(resources.replicaSet, {
      decode: (raw) => {
        seen.push(raw)
        return raw
      }
    })
    const managed = (version: number): KubeObject => ({
      metadata: {
        ...replicaSet("a", version, ["d1"]).metadata,
        labels: { app: "web" },
        managedFields: [{ manager: "kube-controller-manager", operation: "Update", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } }]
      },
      spec: { replicas: version }
    })
    Effect.runSync(store.listed([managed(1)]))
    Effect.runSync(store.written(managed(2)))
    const kept = store.get("default/a")
    expect(kept?.metadata).not.toHaveProperty("managedFields")
    expect(kept).toMatchObject({ metadata: { name: "a", resourceVersion: "2", labels: { app: "web" } }, spec: { replicas: 2 } })
    expect(seen.map((raw) => Object.hasOwn(raw.metadata, "managedFields"))).toEqual([false, false])
  })
})

describe("a deleted object stays deleted", () => {
  const job = (uid: string, version: number, extra: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
    metadata: { name: "pull", namespace: "default", uid, resourceVersion: String(version), ...extra }
  })
  const run = (effect: Effect.Effect<void>) => Effect.runSync(effect)

  it("an answer to our write that comes after the watch's DELETED event does not bring the object back", () => {
    const store = makeStore(resources.imagePullJob)
    const changes: Array<string> = []
    store.onChange((change) => Effect.sync(() => void changes.push(change.type)))
    run(store.listed([job("u1", 1, { finalizers: ["apps.kruise.io/release"] })]))
    // The finalizer's removal deletes it: the watch says so first, then the PATCH answers.
    run(store.removed("default/pull", "u1"))
    run(store.written(job("u1", 3, { deletionTimestamp: "2026-12-04T17:00:00Z" })))
    expect(store.get("default/pull")).toBeUndefined()
    expect(store.size()).toBe(0)
    expect(changes).toEqual(["added", "deleted"])
  })

  it("also when the store never held it, and a new object of the same name is stored", () => {
    const store = makeStore(resources.imagePullJob)
    run(store.removed("default/pull", "u1"))
    run(store.written(job("u1", 3)))
    expect(store.get("default/pull")).toBeUndefined()
    run(store.written(job("u2", 4)))
    expect(store.get("default/pull")?.metadata.uid).toBe("u2")
  })

  it("a late DELETED event of an earlier object under the name leaves the new one", () => {
    const store = makeStore(resources.imagePullJob)
    run(store.written(job("u2", 4)))
    run(store.removed("default/pull", "u1"))
    expect(store.get("default/pull")?.metadata.uid).toBe("u2")
  })

  it("an object we asked to delete is only forgotten: while it waits for finalizers or a grace period its versions come in", () => {
    const store = makeStore(resources.pod)
    run(store.written(job("u1", 1)))
    run(store.removed("default/pull"))
    expect(store.get("default/pull")).toBeUndefined()
    run(store.written(job("u1", 2, { deletionTimestamp: "2026-12-04T17:00:00Z", deletionGracePeriodSeconds: 30 })))
    expect(store.get("default/pull")?.metadata.resourceVersion).toBe("2")
  })

  it("remembers the last deletedUidsKept uids only", () => {
    const store = makeStore(resources.imagePullJob)
    for (let i = 0; i <= deletedUidsKept; i++) run(store.removed(`default/j${i}`, `u${i}`))
    // The oldest was forgotten, the next one is still known.
    run(store.written({ metadata: { name: "j0", namespace: "default", uid: "u0", resourceVersion: "9" } }))
    run(store.written({ metadata: { name: "j1", namespace: "default", uid: "u1", resourceVersion: "9" } }))
    expect(store.get("default/j0")).toBeDefined()
    expect(store.get("default/j1")).toBeUndefined()
  })
})

describe("a store of a kind whose spec follows its generation", () => {
  const nodeImage = (version: number, generation: number, tag: string, phase: string): KubeObject => ({
    metadata: { name: "n1", resourceVersion: String(version), generation },
    spec: { images: { nginx: { tags: [{ tag, version: 0 }] } } },
    status: { imageStatuses: { nginx: { tags: [{ tag, phase }] } } }
  })

  it("keeps the stored spec for a version at the same generation, and takes a new generation's spec", () => {
    const store = makeStore(resources.nodeImage, { specFollowsGeneration: true })
    Effect.runSync(store.written(nodeImage(1, 1, "v1", "Pulling")))
    const spec = store.get("n1")?.["spec"]
    // Not compared: a status report at the same generation has the same spec (the API server moves
    // the generation with every change of it), so even one that says otherwise is not read.
    Effect.runSync(store.written(nodeImage(2, 1, "v2", "Succeeded")))
    expect(store.get("n1")?.["spec"]).toBe(spec)
    expect(store.get("n1")).toMatchObject({
      metadata: { resourceVersion: "2" },
      status: { imageStatuses: { nginx: { tags: [{ phase: "Succeeded" }] } } }
    })
    Effect.runSync(store.written(nodeImage(3, 2, "v2", "Succeeded")))
    expect(store.get("n1")?.["spec"]).toEqual({ images: { nginx: { tags: [{ tag: "v2", version: 0 }] } } })
    // Another object of that name (deleted and made again) starts again at generation 1.
    Effect.runSync(
      store.written({ ...nodeImage(4, 2, "v3", "Pulling"), metadata: { name: "n1", uid: "new", resourceVersion: "4", generation: 2 } })
    )
    expect(store.get("n1")?.["spec"]).toEqual({ images: { nginx: { tags: [{ tag: "v3", version: 0 }] } } })
    // Without the declaration every version's spec is read.
    const plain = makeStore(resources.nodeImage)
    Effect.runSync(plain.written(nodeImage(1, 1, "v1", "Pulling")))
    Effect.runSync(plain.written(nodeImage(2, 1, "v2", "Succeeded")))
    expect(plain.get("n1")?.["spec"]).toEqual({ images: { nginx: { tags: [{ tag: "v2", version: 0 }] } } })
  })
})
