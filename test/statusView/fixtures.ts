import type { KubeObject } from "../../src/kube/KubeApi.ts"
import type { StatusModel } from "../../src/statusView/model.ts"

/** 2026-12-01T10:00:00Z: every time in these tests is an offset from it. */
export const t0 = Date.parse("2026-12-01T10:00:00Z")
export const at = (seconds: number): string => new Date(t0 + seconds * 1000).toISOString().replace(".000Z", "Z")

const kruise = "apps.kruise.io/v1alpha1"

export const pullJob = (
  name: string,
  fields: {
    readonly uid?: string
    readonly image?: string
    readonly parallelism?: number | string
    readonly status?: Record<string, unknown>
    readonly owner?: string
  }
): KubeObject => ({
  apiVersion: kruise,
  kind: "ImagePullJob",
  metadata: {
    name,
    namespace: "default",
    uid: fields.uid ?? `uid-${name}`,
    ...(fields.owner === undefined
      ? {}
      : {
          ownerReferences: [
            { apiVersion: kruise, kind: "ImageListPullJob", name: fields.owner, uid: `uid-${fields.owner}`, controller: true }
          ]
        })
  },
  spec: {
    image: fields.image ?? "nginx:1.9.1",
    ...(fields.parallelism === undefined ? {} : { parallelism: fields.parallelism }),
    completionPolicy: { type: "Always" }
  },
  ...(fields.status === undefined ? {} : { status: fields.status })
})

export const listJob = (name: string, images: ReadonlyArray<string>, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: kruise,
  kind: "ImageListPullJob",
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec: { images: [...images], completionPolicy: { type: "Always" } },
  ...(status === undefined ? {} : { status })
})

/** A NodeImage with one tag of one image, owned by `ownerUid`, in the given status. */
export const nodeImage = (
  name: string,
  entry: {
    readonly image: string
    readonly tag: string
    readonly ownerUid: string
    readonly version?: number
    readonly status?: Record<string, unknown>
  }
): KubeObject => ({
  apiVersion: kruise,
  kind: "NodeImage",
  metadata: { name },
  spec: {
    images: {
      [entry.image]: {
        tags: [{ tag: entry.tag, version: entry.version ?? 0, ownerReferences: [{ uid: entry.ownerUid, kind: "ImagePullJob" }] }]
      }
    }
  },
  status: {
    desired: 1,
    pulling: 0,
    waiting: 0,
    succeeded: 0,
    failed: 0,
    ...(entry.status === undefined
      ? {}
      : {
          imageStatuses: { [entry.image]: { tags: [{ tag: entry.tag, version: entry.version ?? 0, ...entry.status }] } }
        })
  }
})

/** The model the golden tests draw: one of each phase, nodes pulling and failed. */
export const goldenModel: StatusModel = {
  namespace: "default",
  jobs: [
    {
      kind: "ImagePullJob",
      namespace: "default",
      name: "warm-nginx",
      target: "nginx:1.9.1",
      phase: "running",
      message: "job is running, progress 40.0%",
      desired: 10,
      active: 3,
      succeeded: 3,
      failed: 1,
      startTime: t0 - 120_000,
      nodes: [
        { node: "node-5", phase: "Pulling", progress: 42, startTime: t0 - 15_000 },
        { node: "node-12", phase: "Pulling", startTime: t0 - 3_000 },
        { node: "node-7", phase: "Failed", message: "rpc error: not found" }
      ]
    },
    {
      kind: "ImageListPullJob",
      namespace: "default",
      name: "base-images",
      target: "2 images",
      phase: "completed",
      message: "",
      desired: 2,
      active: 0,
      succeeded: 2,
      failed: 0,
      startTime: t0 - 600_000,
      completionTime: t0 - 300_000,
      nodes: []
    },
    {
      kind: "ImagePullJob",
      namespace: "default",
      name: "later",
      target: "busybox:1.36",
      parent: "base-images",
      phase: "paused",
      message: "job is paused, progress 0.0%",
      desired: 3,
      active: 0,
      succeeded: 0,
      failed: 0,
      nodes: []
    }
  ]
}
