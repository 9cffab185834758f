import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { nodeImageSpecs, readableSpec } from "../../src/daemon/nodeImageSpec.ts"
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
    if (Result.isSuccess(decoded)) expect(decoded.success.spec.images?.["nginx"]?.tags[0]).toMatchObject({ tag: "1.9.1", version: 0 })
  })

  it("says where a spec does not decode: an image whose tags are no list names no tag, the rest goes on", () => {
    const decoded = nodeImageSpecs()({
      metadata: { name: "node-1" },
      spec: { images: { nginx: { tags: "1.9.1" }, redis: { tags: [{ tag: "7" }] } } }
    })
    const view = Result.getOrThrow(decoded)
    expect(view.problems).toEqual(['spec.images.nginx.tags: expected array, got "1.9.1"'])
    expect(Object.keys(view.spec.images ?? {})).toEqual(["redis"])
    expect(Result.isFailure(nodeImageSpecs()({ metadata: { name: "node-1" }, spec: { images: [] } }))).toBe(true)
  })

  // Issue 24: one unreadable tag refused the whole NodeImage, and every other tag of the node stalled.
  it("reads tag by tag: a tag that does not decode stands in by name, version and owners, with why", () => {
    const owner = { kind: "ImagePullJob", name: "huge", namespace: "default", uid: "u1" }
    const decoded = nodeImageSpecs()({
      metadata: { name: "node-1" },
      spec: {
        images: {
          nginx: {
            tags: [{ tag: "1.9.1", version: 3, ownerReferences: [owner], pullPolicy: { activeDeadlineSeconds: 2 ** 53 } }, { tag: "2" }]
          },
          "registry.example.com/app": { sandboxConfig: { labels: { a: 1 } }, tags: [{ tag: "v1" }] }
        }
      }
    })
    const view = Result.getOrThrow(decoded)
    expect(view.spec.images?.["nginx"]?.tags).toEqual([
      { tag: "1.9.1", version: 3, imagePullPolicy: "IfNotPresent", ownerReferences: [owner] },
      { tag: "2", version: 0, imagePullPolicy: "IfNotPresent" }
    ])
    expect([...view.unreadable]).toEqual([
      [
        "nginx 1.9.1",
        "spec.images.nginx.tags[0].pullPolicy.activeDeadlineSeconds: expected an integer and a value less than or equal to 9007199254740991, " +
          "got 9007199254740992"
      ],
      // An image field that does not decode fails each of the image's tags.
      ["registry.example.com/app v1", 'spec.images["registry.example.com/app"].sandboxConfig.labels.a: expected string, got 1']
    ])
    expect(readableSpec(view).images?.["nginx"]?.tags.map((t) => t.tag)).toEqual(["2"])
    expect(view.problems).toEqual([])
  })

  it("shows what was written quoted and escaped, cut short", () => {
    const decoded = nodeImageSpecs()({
      metadata: { name: "node-1" },
      spec: { images: { nginx: { tags: [{ tag: "1", imagePullPolicy: `Al\u202eways${"x".repeat(100)}` }] } } }
    })
    const [why] = Result.getOrThrow(decoded).unreadable.values()
    expect(why).toMatch(
      /^spec\.images\.nginx\.tags\[0\]\.imagePullPolicy: expected "Always" \| "IfNotPresent", got "Al\\u202eways(x+)"\.\.\.$/
    )
  })

  it("fails a tag whose version is negative: no status could carry it", () => {
    const decoded = nodeImageSpecs()({ metadata: { name: "node-1" }, spec: { images: { nginx: { tags: [{ tag: "1", version: -1 }] } } } })
    const view = Result.getOrThrow(decoded)
    expect(view.spec.images?.["nginx"]?.tags).toEqual([{ tag: "1", version: 0, imagePullPolicy: "IfNotPresent" }])
    expect([...view.unreadable]).toEqual([
      ["nginx 1", "spec.images.nginx.tags[0].version: expected a value greater than or equal to 0, got -1"]
    ])
  })

  it("reads again only the image entries a new spec changed", () => {
    const decode = nodeImageSpecs()
    const nginx = { tags: [{ tag: "1.9.1" }] }
    const first = Result.getOrThrow(decode({ metadata: { name: "node-1" }, spec: { images: { nginx } } }))
    const second = Result.getOrThrow(decode({ metadata: { name: "node-1" }, spec: { images: { nginx, redis: { tags: [{ tag: "7" }] } } } }))
    expect(second.spec.images?.["nginx"]).toBe(first.spec.images?.["nginx"])
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
