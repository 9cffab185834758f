// What a Node's status.images says is on it (issue 39). The kubelet lists the node's images largest
// first, at most nodeStatusMaxImages of them (default 50; -1 for all), each by its repo digests then
// its repo tags, five names at most (kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go Images),
// from an image list it refreshes every 30 s (pkg/kubelet/images/image_gc_manager.go Start) and
// writes with the node's status every nodeStatusUpdateFrequency (10 s). The scheduler's
// ImageLocality plugin scores nodes from that list alone.
import { Result } from "effect"
import { parseImageReference, pullReference } from "./imageReference.ts"
import type { ImageReference } from "./imageReference.ts"

/** A Node object, as far as its status.images go. */
type NodeObject = { readonly [field: string]: unknown }

/** The kubelet's default nodeStatusMaxImages (KubeletConfiguration). */
export const kubeletDefaultMaxImages = 50

/**
 * One key per image name, equal for two references exactly when `sameImage` says they name the
 * same image: a digest stands for the content whatever the tag, a tag (latest when none) only for a
 * tag; registry and library/ normalised.
 */
export const imageKey = (ref: ImageReference): string =>
  ref.digest === undefined ? `${ref.domain}/${ref.path}:${ref.tag ?? "latest"}` : `${ref.domain}/${ref.path}@${ref.digest}`

/** A node's status.images as names to look up. */
export interface ReportedImages {
  /** How many images the node lists (its list may be cut at nodeStatusMaxImages). */
  readonly count: number
  /** Whether the node lists the image `name` with `tag` (a tag, or a digest as NodeImages write them), or its manifest `digest`. */
  readonly lists: (name: string, tag: string, digest?: string) => boolean
}

const keyOf = (reference: string): string | undefined => {
  const parsed = parseImageReference(reference)
  return Result.isSuccess(parsed) ? imageKey(parsed.success) : undefined
}

/**
 * The node's list, each name normalised once. An image is listed when the node names it by its tag,
 * or by the repository with the manifest digest a pull resolved (repo digests come first in the
 * kubelet's names, so they survive its five-name cut when many tags do not).
 */
export const reportedImages = (node: NodeObject | undefined): ReportedImages => {
  const images = (node?.["status"] as { images?: ReadonlyArray<{ names?: ReadonlyArray<string> }> } | undefined)?.images ?? []
  const keys = new Set<string>()
  for (const image of images) {
    for (const name of image.names ?? []) {
      const key = keyOf(name)
      if (key !== undefined) keys.add(key)
    }
  }
  return {
    count: images.length,
    lists: (name, tag, digest) => {
      const byTag = keyOf(pullReference({ name, tag }))
      if (byTag !== undefined && keys.has(byTag)) return true
      if (digest === undefined || tag.includes(":")) return false
      const byDigest = keyOf(`${name}@${digest}`)
      return byDigest !== undefined && keys.has(byDigest)
    }
  }
}

/** The images of a Node's status, for a change handler to tell whether they changed. */
export const statusImagesOf = (node: NodeObject | undefined): unknown => (node?.["status"] as { images?: unknown } | undefined)?.images
