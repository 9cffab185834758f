// preheat_node_images_unreported (issue 39): the images this node's succeeded tags hold that its
// Node's status.images leaves out; and that list as the status reporter reads it, for the tags'
// `unreported` marks (unreportedTags.ts). The kubelet lists only its nodeStatusMaxImages largest
// images (api/nodeStatusImages.ts), and the scheduler's ImageLocality plugin scores from that list
// alone: a small image preheat warmed among larger ones is there, and counts for nothing.
import { Effect } from "effect"
import type { ImageStatus } from "../api/nodeImage.ts"
import { reportedImages, statusImagesOf } from "../api/nodeStatusImages.ts"
import type { ReportedImages } from "../api/nodeStatusImages.ts"
import type { KubeObject } from "../kube/KubeApi.ts"

const statusesOf = (nodeImage: KubeObject | undefined): Readonly<Record<string, ImageStatus>> | undefined =>
  (nodeImage?.["status"] as { imageStatuses?: Readonly<Record<string, ImageStatus>> } | undefined)?.imageStatuses

/**
 * How many of the images the NodeImage's Succeeded tags hold the Node does not list, by the tag's
 * name (registry and library/ normalised) or by the manifest digest the pull resolved to. 0 while
 * the Node lists no image at all (no status yet, or a kubelet with nodeStatusMaxImages 0): nothing
 * to judge by. The kubelet lists a new image within about 40 s (its image list every 30 s, its
 * status every 10 s): a pull that just ended is counted until then.
 */
export const unreportedCount = (nodeImage: KubeObject | undefined, node: KubeObject | undefined): number => {
  const reported = reportedImages(node)
  if (reported.count === 0) return 0
  let count = 0
  for (const [image, status] of Object.entries(statusesOf(nodeImage) ?? {})) {
    for (const tag of status.tags ?? []) {
      if (tag.phase === "Succeeded" && !reported.lists(image, tag.tag, tag.digest)) count++
    }
  }
  return count
}

/**
 * The gauge, counted again only when what it is counted from changed: the NodeImage's statuses or
 * the Node's images (the stores keep an unchanged part of a new version as the same object, so a
 * Node's heartbeat or a pull's progress costs one comparison).
 */
export const makeUnreportedGauge = (set: (count: number) => Effect.Effect<void>) => {
  let counted: { readonly statuses: unknown; readonly images: unknown } | undefined
  return (nodeImage: KubeObject | undefined, node: KubeObject | undefined): Effect.Effect<void> =>
    Effect.suspend(() => {
      const inputs = { statuses: statusesOf(nodeImage), images: statusImagesOf(node) }
      if (counted !== undefined && counted.statuses === inputs.statuses && counted.images === inputs.images) return Effect.void
      counted = inputs
      return set(unreportedCount(nodeImage, node))
    })
}

/**
 * The Node's list as the status reporter reads it (unreportedTags.ts): undefined while `node` gives
 * none (its watch not synced yet, or no Node of that name); each version of status.images read once.
 */
export const nodeListing = (node: () => KubeObject | undefined): (() => ReportedImages | undefined) => {
  let read: { readonly images: unknown; readonly reported: ReportedImages } | undefined
  return () => {
    const object = node()
    if (object === undefined) return undefined
    const images = statusImagesOf(object)
    if (read === undefined || read.images !== images) read = { images, reported: reportedImages(object) }
    return read.reported
  }
}
