import { describe, expect, it } from "vitest"
import type { ImageSpec } from "../../src/api/nodeImage.ts"
import { maxNodeImages } from "../../src/api/nodeImage.ts"
import { batchTaskChanges } from "../../src/controller/imagePullJob/taskBatch.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const entry = (owner: string): ImageSpec => ({ tags: [{ tag: "v1", ownerReferences: [{ uid: owner }] }] }) as unknown as ImageSpec

const nodeImage = (generation: number, images: Record<string, ImageSpec>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name: "n1", generation },
  spec: { images }
})

const part = (decidedOn: KubeObject | undefined, changes: Record<string, ImageSpec | undefined>) => ({
  decidedOn,
  changes: new Map(Object.entries(changes))
})

describe("several jobs' task changes to one NodeImage", () => {
  const current = nodeImage(3, { a: entry("job-a") })

  it("go out in one write when they change different images, whatever version each was decided on", () => {
    const older = nodeImage(2, { a: entry("job-a") })
    const batch = batchTaskChanges(current, [part(current, { b: entry("job-b") }), part(older, { c: entry("job-c"), a: undefined })])
    expect(batch.taken).toEqual([0, 1])
    expect(batch.stale).toEqual([])
    expect(Object.fromEntries(batch.changes)).toEqual({ b: entry("job-b"), c: entry("job-c"), a: undefined })
  })

  it("in the order they came: a part replacing an entry one before it changed is stale, as it would have conflicted", () => {
    const batch = batchTaskChanges(current, [
      part(current, { a: entry("job-a+b") }),
      part(current, { a: entry("job-a+c") }),
      part(current, { d: entry("job-d") })
    ])
    expect(batch.taken).toEqual([0, 2])
    expect(batch.stale).toEqual([1])
    expect(Object.fromEntries(batch.changes)).toEqual({ a: entry("job-a+b"), d: entry("job-d") })
  })

  it("a part decided on a version whose entry changed since is stale; its other images wait for it", () => {
    const older = nodeImage(2, {})
    const batch = batchTaskChanges(current, [part(older, { a: entry("job-x"), e: entry("job-x") })])
    expect(batch).toEqual({ changes: new Map(), taken: [], stale: [0] })
  })

  it("a part adding an image the NodeImage has no room left for, after those before it, is stale", () => {
    const almost = nodeImage(3, Object.fromEntries(Array.from({ length: maxNodeImages - 1 }, (_, i) => [`i${i}`, entry("job-x")])))
    const batch = batchTaskChanges(almost, [part(almost, { b: entry("job-b") }), part(almost, { c: entry("job-c") })])
    expect(batch.taken).toEqual([0])
    expect(batch.stale).toEqual([1])
  })

  it("are all stale when the NodeImage is gone", () => {
    expect(batchTaskChanges(undefined, [part(current, { b: entry("job-b") })]).stale).toEqual([0])
  })
})
