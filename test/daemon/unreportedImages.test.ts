// preheat_node_images_unreported (issue 39): the images the node's succeeded tags hold that its
// Node's status.images leaves out, counted when either changes; end to end with a simulated
// kubelet listing the node's two largest images.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { reportNodeImages } from "../../harness/cluster/kubeletImageList.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { makeUnreportedGauge, unreportedCount } from "../../src/daemon/unreportedImages.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, createNodeImage, launch, node, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const digest = `sha256:${"d".repeat(64)}`
const Mi = 2 ** 20

const nodeImage = (statuses: Record<string, ReadonlyArray<Record<string, unknown>>>): KubeObject => ({
  metadata: { name: node },
  status: { imageStatuses: Object.fromEntries(Object.entries(statuses).map(([image, tags]) => [image, { tags }])) }
})
const listing = (...names: ReadonlyArray<string>): KubeObject => ({
  metadata: { name: node },
  status: { images: names.map((name) => ({ names: [name], sizeBytes: 1 })) }
})

describe("unreportedCount", () => {
  const statuses = nodeImage({
    nginx: [{ tag: "1.25", phase: "Succeeded" }],
    "ghcr.io/team/app": [{ tag: "2", phase: "Succeeded", digest }],
    redis: [{ tag: "7", phase: "Pulling" }],
    busybox: [{ tag: "1", phase: "Failed" }]
  })

  it("the succeeded tags' images the node does not list, by tag or by the digest the pull resolved", () => {
    expect(unreportedCount(statuses, listing("docker.io/library/redis:7"))).toBe(2)
    expect(unreportedCount(statuses, listing("docker.io/library/nginx:1.25"))).toBe(1)
    expect(unreportedCount(statuses, listing("docker.io/library/nginx:1.25", `ghcr.io/team/app@${digest}`))).toBe(0)
  })

  it("0 while the node lists no image: nothing to judge by", () => {
    expect(unreportedCount(statuses, undefined)).toBe(0)
    expect(unreportedCount(statuses, listing())).toBe(0)
    expect(unreportedCount(undefined, listing("docker.io/library/redis:7"))).toBe(0)
  })

  it("the gauge is counted again only when the statuses or the node's images changed", () =>
    Effect.runSync(
      Effect.gen(function* () {
        const counts: Array<number> = []
        const update = makeUnreportedGauge((count) => Effect.sync(() => void counts.push(count)))
        const list = listing("docker.io/library/redis:7")
        yield* update(statuses, list)
        // A heartbeat: another Node version, the same images.
        yield* update(statuses, { ...list, metadata: { name: node, resourceVersion: "2" } })
        yield* update(statuses, listing("docker.io/library/nginx:1.25"))
        expect(counts).toEqual([2, 1])
      })
    ))
})

describe("daemon: preheat_node_images_unreported", () => {
  it.effect("a small image among larger ones the kubelet lists two of: counted, then not once listed", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const metrics = yield* Metrics
      const runtime = yield* CriRuntime
      yield* api.create(resources.node, { apiVersion: "v1", kind: "Node", metadata: { name: node } })
      yield* createNodeImage({
        "registry.example/big-a": { tags: [tag("1")] },
        "registry.example/big-b": { tags: [tag("1")] },
        "registry.example/small": { tags: [tag("1")] }
      })
      yield* launch()
      yield* reportNodeImages(node, runtime, 2)
      yield* advance(12_000, 500)
      expect((yield* tagStatus("registry.example/small", "1"))?.phase).toBe("Succeeded")
      const listed = (yield* api.get(resources.node, { name: node }))["status"] as { images: ReadonlyArray<{ names: Array<string> }> }
      expect(listed.images.flatMap((i) => i.names).filter((n) => !n.includes("@"))).toEqual([
        "registry.example/big-a:1",
        "registry.example/big-b:1"
      ])
      expect(yield* metrics.read("preheat_node_images_unreported")).toBe(1)
      // A kubelet listing every image (nodeStatusMaxImages -1): nothing left out.
      yield* reportNodeImages(node, runtime, -1)
      yield* advance(11_000, 500)
      expect(yield* metrics.read("preheat_node_images_unreported")).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(testLayer({ synthesizedSize: (ref) => (ref.path.startsWith("big") ? 300 * Mi : 20 * Mi) })))
  )
})
