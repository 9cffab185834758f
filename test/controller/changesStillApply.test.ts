import { describe, expect, it } from "vitest"
import type { ImageSpec } from "../../src/api/nodeImage.ts"
import { maxNodeImages } from "../../src/api/nodeImage.ts"
import { changesStillApply } from "../../src/controller/writes.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const entry = (owner: string): ImageSpec => ({ tags: [{ tag: "v1", ownerReferences: [{ uid: owner }] }] }) as unknown as ImageSpec

const nodeImage = (generation: number, images: Record<string, ImageSpec>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name: "n1", generation },
  spec: { images }
})

describe("changes decided on one version of a NodeImage", () => {
  const decidedOn = nodeImage(1, { a: entry("job-a") })
  const mine = new Map([["b", entry("job-b")]])

  it("still apply when a newer version changed other images only", () => {
    expect(changesStillApply(decidedOn, nodeImage(2, { a: entry("job-a"), c: entry("job-c") }), mine)).toBe(true)
  })

  it("are decided again when an entry they replace changed (another job's owner on the same image)", () => {
    const shared = new Map([["a", entry("job-b")]])
    expect(changesStillApply(decidedOn, nodeImage(2, { a: entry("job-a2") }), shared)).toBe(false)
    expect(changesStillApply(decidedOn, nodeImage(2, {}), shared)).toBe(false)
  })

  it("are decided again when the newer version has no room left for the image they add", () => {
    const full = Object.fromEntries(Array.from({ length: maxNodeImages }, (_, i) => [`i${i}`, entry("job-x")]))
    expect(changesStillApply(decidedOn, nodeImage(2, full), mine)).toBe(false)
  })

  it("are decided again when the NodeImage is gone", () => {
    expect(changesStillApply(decidedOn, undefined, mine)).toBe(false)
  })
})
