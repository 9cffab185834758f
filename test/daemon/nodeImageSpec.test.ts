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
})
