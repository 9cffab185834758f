import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { throttledMessage } from "../../src/api/registryThrottle.ts"
import { nodeImageAsRead } from "../../src/controller/nodeImage/asRead.ts"
import { nodeImageView } from "../../src/controller/nodeImage/view.ts"
import { nodeState } from "../../src/controller/imagePullJob/nodeTask.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { pullsUnderWay } from "../../src/controller/imagePullJob/registryRoom.ts"
import { controllerStores } from "../../src/controller/stores.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const owner = (uid: string) => ({ apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", name: uid, namespace: "default", uid })
const specTag = (tag: string, uid: string) => ({ tag, version: 0, imagePullPolicy: "IfNotPresent", ownerReferences: [owner(uid)] })

/** A NodeImage as a daemon leaves it: a succeeded, a failed, a throttled and a pulling tag, and its first sync. */
const reported = (node: string, resourceVersion: string, startedAt: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1beta1",
  kind: "NodeImage",
  metadata: { name: node, uid: `uid-${node}`, resourceVersion, generation: 1, labels: { "kubernetes.io/hostname": node } },
  spec: {
    images: {
      "registry.example.com/app": { tags: [specTag("v1", "ok"), specTag("v2", "bad")] },
      "registry.example.com/slow": { tags: [specTag("v1", "slow")] },
      "registry.example.com/busy": { tags: [specTag("v1", "busy")] }
    }
  },
  status: {
    desired: 4,
    succeeded: 1,
    failed: 1,
    pulling: 2,
    firstSyncStatus: { syncAt: startedAt, status: "Succeeded", message: "no images to pull" },
    imageStatuses: {
      "registry.example.com/app": {
        tags: [
          {
            tag: "v1",
            version: 0,
            phase: "Succeeded",
            progress: 100,
            startTime: startedAt,
            completionTime: "2026-12-06T01:00:09Z",
            imageID: "sha256:0123",
            digest: "registry.example.com/app@sha256:4567",
            authenticated: true,
            message: `pulled image "registry.example.com/app:v1" on node ${node} in 3s`
          },
          {
            tag: "v2",
            version: 0,
            phase: "Failed",
            progress: 40,
            startTime: startedAt,
            completionTime: "2026-12-06T01:00:09Z",
            message: "failed to pull image: not found"
          }
        ]
      },
      "registry.example.com/slow": {
        tags: [{ tag: "v1", version: 0, phase: "Waiting", startTime: startedAt, message: throttledMessage("429 Too Many Requests") }]
      },
      "registry.example.com/busy": { tags: [{ tag: "v1", version: 0, phase: "Pulling", progress: 30, startTime: startedAt }] }
    }
  }
})

const task = (image: string, tag: string, uid: string): JobTask => ({
  image,
  tag,
  owner: owner(uid),
  imagePullPolicy: "IfNotPresent",
  pullSecrets: []
})

const tasks = [
  task("registry.example.com/app", "v1", "ok"),
  task("registry.example.com/app", "v2", "bad"),
  task("registry.example.com/slow", "v1", "slow"),
  task("registry.example.com/busy", "v1", "busy")
]

describe("what the controller keeps of a NodeImage", () => {
  it("its spec and metadata whole; of its status not the first sync, image ids, start times, a finished tag's progress or a success's message", () => {
    const nodeImage = reported("n1", "7", "2026-12-06T01:00:06Z")
    const kept = nodeImageAsRead(nodeImage)
    expect(kept["spec"]).toBe(nodeImage["spec"])
    expect(kept.metadata).toBe(nodeImage.metadata)
    expect(kept["status"]).toEqual({
      desired: 4,
      succeeded: 1,
      failed: 1,
      pulling: 2,
      imageStatuses: {
        "registry.example.com/app": {
          tags: [
            {
              tag: "v1",
              version: 0,
              phase: "Succeeded",
              completionTime: "2026-12-06T01:00:09Z",
              digest: "registry.example.com/app@sha256:4567",
              authenticated: true
            },
            { tag: "v2", version: 0, phase: "Failed", completionTime: "2026-12-06T01:00:09Z", message: "failed to pull image: not found" }
          ]
        },
        "registry.example.com/slow": {
          tags: [{ tag: "v1", version: 0, phase: "Waiting", message: throttledMessage("429 Too Many Requests") }]
        },
        "registry.example.com/busy": { tags: [{ tag: "v1", version: 0, phase: "Pulling", progress: 30 }] }
      }
    })
    // What the controller reads of it reads the same from what is kept.
    const full = nodeImageView(nodeImage) as NodeImage
    const view = nodeImageView(kept) as NodeImage
    for (const t of tasks) expect(nodeState(view, t)).toEqual(nodeState(full, t))
    expect(pullsUnderWay([view], (uid) => uid)).toEqual(pullsUnderWay([full], (uid) => uid))
    // Nothing to leave out: the object itself.
    const bare: KubeObject = {
      metadata: { name: "bare" },
      spec: {},
      status: { imageStatuses: { a: { tags: [{ tag: "v1", phase: "Succeeded" }] } } }
    }
    expect(nodeImageAsRead(bare)).toBe(bare)
    expect(nodeImageAsRead({ metadata: { name: "none" } })).toEqual({ metadata: { name: "none" } })
  })

  it("makes the outcomes of nodes that finished in the same second one object in the store", () => {
    const { nodeImages } = controllerStores()
    // Started at different times, each its own message: equal once kept as read.
    Effect.runSync(nodeImages.listed([reported("n1", "1", "2026-12-06T01:00:05Z"), reported("n2", "2", "2026-12-06T01:00:06Z")]))
    const appOf = (name: string) =>
      (nodeImages.get(name)!["status"] as { imageStatuses: Record<string, unknown> }).imageStatuses["registry.example.com/app"]
    expect(appOf("n2")).toBe(appOf("n1"))
    expect(nodeImages.get("n1")?.["status"]).not.toHaveProperty("firstSyncStatus")
  })
})
