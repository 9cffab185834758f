import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { nodeImageSpecs } from "../../src/daemon/nodeImageSpec.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const spec = { images: { nginx: { tags: [{ tag: "1.9.1" }] } } }
const version = (resourceVersion: string, status: unknown): KubeObject => ({
  metadata: { name: "node-1", resourceVersion },
  spec,
  status
})

describe("nodeImageSpecs", () => {
  it("decodes the spec with its defaults", () => {
    const decoded = nodeImageSpecs()(version("1", {}))
    expect(Result.isSuccess(decoded)).toBe(true)
    if (Result.isSuccess(decoded)) expect(decoded.success.images?.["nginx"]?.tags[0]).toMatchObject({ tag: "1.9.1", version: 0 })
  })

  it("says where a spec does not decode", () => {
    const decoded = nodeImageSpecs()({ metadata: { name: "node-1" }, spec: { images: { nginx: { tags: "1.9.1" } } } })
    expect(Result.isFailure(decoded) ? decoded.failure : "").toMatch(/^spec\.images\.nginx\.tags: /)
  })

  it("decodes a spec once for versions that share it (status writes), each decoder on its own", () => {
    const decode = nodeImageSpecs()
    const first = decode(version("1", {}))
    expect(decode(version("2", { imageStatuses: {} }))).toBe(first)
    expect(nodeImageSpecs()(version("2", {}))).not.toBe(first)
  })

  it("remembers only the spec decoded last, so older specs (and their decoded copies) are not held", () => {
    const decode = nodeImageSpecs()
    const older = { images: { nginx: { tags: [{ tag: "1.9.1" }] } } }
    const first = decode({ metadata: { name: "node-1", resourceVersion: "1" }, spec: older })
    const newer = decode({ metadata: { name: "node-1", resourceVersion: "2" }, spec: { images: {} } })
    expect(newer).not.toBe(first)
    // Decoded again: nothing of the older spec was kept once a newer one came.
    const again = decode({ metadata: { name: "node-1", resourceVersion: "1" }, spec: older })
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
  })
})
