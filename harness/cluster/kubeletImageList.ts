// A simulated node's kubelet writing the node's images into its status, as the kubelet does
// (kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go Images, from the image list its image
// manager keeps sorted by size, pkg/kubelet/images/image_cache): largest first, at most
// nodeStatusMaxImages of them (-1: every one), each named by its repo digests then its repo tags,
// five names at most; written when it changed, every 10 s (nodeStatusUpdateFrequency).
import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import { kubeletDefaultMaxImages } from "../../src/api/nodeStatusImages.ts"
import type { CriRuntime, ImageInfo } from "../../src/cri/CriRuntime.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

/** The kubelet's maxNamesPerImageInNodeStatus. */
const namesPerImage = 5

/** The kubelet's nodeStatusUpdateFrequency default. */
const statusPeriod = Duration.seconds(10)

export interface ContainerImage {
  readonly names: ReadonlyArray<string>
  readonly sizeBytes: number
}

/** The node's status.images for these runtime images, as the kubelet makes it (none: absent). */
export const nodeStatusImages = (images: ReadonlyArray<ImageInfo>, maxImages = kubeletDefaultMaxImages): ReadonlyArray<ContainerImage> => {
  const sorted = [...images].sort((a, b) => b.size - a.size)
  const kept = maxImages > -1 && maxImages < sorted.length ? sorted.slice(0, maxImages) : sorted
  return kept.map((image) => ({ names: [...image.repoDigests, ...image.repoTags].slice(0, namesPerImage), sizeBytes: image.size }))
}

/**
 * Keeps node `name`'s status.images to what its runtime holds, for the life of the scope. A runtime
 * that does not answer leaves the last list, as the kubelet keeps its cached one.
 */
export const reportNodeImages = (
  name: string,
  runtime: CriRuntime["Service"],
  maxImages = kubeletDefaultMaxImages
): Effect.Effect<void, never, KubeApi | Scope.Scope> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    let written: string | undefined
    const sync = Effect.gen(function* () {
      const images = nodeStatusImages(yield* runtime.listImages, maxImages)
      const text = JSON.stringify(images)
      if (text === written) return
      yield* api.patch(resources.node, { name }, { status: { images: images.length === 0 ? null : images } }, "status")
      written = text
    }).pipe(Effect.ignore)
    yield* Effect.forkScoped(Effect.repeat(sync, Schedule.spaced(statusPeriod)))
  })
