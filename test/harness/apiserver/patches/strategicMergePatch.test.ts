import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { applyStrategicMergePatch } from "../../../../harness/apiserver/patches/strategicMergePatch.ts"

const keys = { "metadata.finalizers": "", "spec.containers": "name", "spec.containers.env": "name" }
const apply = (original: Record<string, unknown>, patch: unknown) => Result.getOrThrow(applyStrategicMergePatch(original, patch, keys))

const pod = {
  metadata: { labels: { a: "1" }, finalizers: ["x"] },
  spec: {
    containers: [
      { name: "main", image: "nginx", env: [{ name: "A", value: "1" }] },
      { name: "side", image: "busybox" }
    ],
    tolerations: [{ key: "t1" }]
  }
}

describe("strategic merge patch", () => {
  it("maps merge, null deletes, lists without a merge key are replaced", () => {
    expect(apply(pod, { metadata: { labels: { a: null, b: "2" } }, spec: { tolerations: [{ key: "t2" }] } })).toMatchObject({
      metadata: { labels: { b: "2" } },
      spec: { tolerations: [{ key: "t2" }] }
    })
  })

  it("lists with a merge key merge element by element; $patch: delete removes one", () => {
    const patched = apply(pod, {
      spec: {
        containers: [
          { name: "main", image: "nginx:2" },
          { name: "new", image: "x" },
          { name: "side", $patch: "delete" }
        ]
      }
    })
    expect(patched["spec"]).toMatchObject({
      containers: [
        { name: "main", image: "nginx:2", env: [{ name: "A", value: "1" }] },
        { name: "new", image: "x" }
      ]
    })
  })

  it("sets of primitives gain values; $deleteFromPrimitiveList removes them", () => {
    expect(apply(pod, { metadata: { finalizers: ["y"] } })["metadata"]).toMatchObject({ finalizers: ["x", "y"] })
    expect(apply(pod, { metadata: { "$deleteFromPrimitiveList/finalizers": ["x"] } })["metadata"]).toMatchObject({ finalizers: [] })
  })

  it("$setElementOrder orders a merged list; $retainKeys drops the others; $patch: replace replaces", () => {
    const ordered = apply(pod, { spec: { "$setElementOrder/containers": [{ name: "side" }, { name: "main" }] } })
    expect((ordered["spec"] as { containers: Array<{ name: string }> }).containers.map((c) => c.name)).toEqual(["side", "main"])
    expect(apply({ spec: { a: 1, b: 2 } }, { spec: { $retainKeys: ["b", "c"], c: 3 } })).toEqual({ spec: { b: 2, c: 3 } })
    expect(apply(pod, { metadata: { $patch: "replace", name: "only" } })["metadata"]).toEqual({ name: "only" })
  })

  it("an element without its merge key is an error", () => {
    const result = applyStrategicMergePatch(pod, { spec: { containers: [{ image: "x" }] } }, keys)
    expect(Result.isFailure(result) && result.failure.message).toBe(`map: {"image":"x"} does not contain declared merge key: name`)
  })

  it("an unknown $patch directive and a patch that is not an object are errors", () => {
    const message = (patch: unknown) => {
      const result = applyStrategicMergePatch(pod, patch, keys)
      return Result.isFailure(result) ? result.failure.message : undefined
    }
    expect(message({ spec: { $patch: "explode" } })).toBe("Unknown patch type: explode")
    expect(message({ spec: { containers: [{ name: "main", $patch: "explode" }] } })).toBe("Unknown patch type: explode")
    expect(message([1])).toBe("the patch must be a JSON object")
  })
})
