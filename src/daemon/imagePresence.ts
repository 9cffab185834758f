import { Result } from "effect"
import { parseImageReference, sameImage } from "../api/imageReference.ts"
import type { ImageInfo } from "../cri/CriRuntime.ts"

/**
 * The node's image that `reference` names, looking at every repoTag and repoDigest with docker.io
 * and library/ normalised. A digest reference matches only a repoDigest and a tag only a repoTag
 * (`sameImage`): a tag says nothing about which content it currently names.
 */
export const findImage = (reference: string, images: ReadonlyArray<ImageInfo>): ImageInfo | undefined => {
  const wanted = parseImageReference(reference)
  if (Result.isFailure(wanted)) return undefined
  return images.find((image) =>
    [...image.repoTags, ...image.repoDigests].some((name) => {
      const parsed = parseImageReference(name)
      return Result.isSuccess(parsed) && sameImage(wanted.success, parsed.success)
    })
  )
}
