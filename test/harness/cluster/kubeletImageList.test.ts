// The simulated kubelets' status.images, as the kubelet writes it (kubernetes/kubernetes
// pkg/kubelet/nodestatus/setters.go Images): largest first, nodeStatusMaxImages of them (-1: all,
// 0: none), named by repo digests then repo tags, five names at most.
import { describe, expect, it } from "vitest"
import { nodeStatusImages } from "../../../harness/cluster/kubeletImageList.ts"
import type { ImageInfo } from "../../../src/cri/CriRuntime.ts"

const image = (name: string, size: number, tags = 1): ImageInfo => ({
  id: `sha256:${name}`,
  repoDigests: [`docker.io/library/${name}@sha256:${"0".repeat(64)}`],
  repoTags: Array.from({ length: tags }, (_, i) => `docker.io/library/${name}:${i + 1}`),
  size
})

describe("nodeStatusImages", () => {
  const images = [image("small", 10), image("large", 300), image("middle", 100)]

  it("largest first, cut at nodeStatusMaxImages (50 by default)", () => {
    expect(nodeStatusImages(images).map((i) => i.sizeBytes)).toEqual([300, 100, 10])
    expect(nodeStatusImages(images, 2).map((i) => i.sizeBytes)).toEqual([300, 100])
    const many = Array.from({ length: 60 }, (_, i) => image(`i${i}`, 1000 + i))
    expect(nodeStatusImages(many)).toHaveLength(50)
    expect(nodeStatusImages(many)[49]?.sizeBytes).toBe(1010)
  })

  it("-1 lists every image, 0 none", () => {
    expect(nodeStatusImages(images, -1)).toHaveLength(3)
    expect(nodeStatusImages(images, 0)).toEqual([])
  })

  it("names: repo digests, then repo tags, five at most", () => {
    const [listed] = nodeStatusImages([image("app", 1, 6)])
    expect(listed?.names).toEqual([
      `docker.io/library/app@sha256:${"0".repeat(64)}`,
      "docker.io/library/app:1",
      "docker.io/library/app:2",
      "docker.io/library/app:3",
      "docker.io/library/app:4"
    ])
  })
})
