// The node's Succeeded tags whose image its Node's status.images leaves out (issue 39), marked on
// the tag's status (`unreported: true`) for the controller's ImageUnreported condition. The daemon
// judges because it watches its own Node anyway: the controller keeps no Node's status.images,
// most of a Node's size (a kubelet lists 50 images of up to five names each; issue 40). Pure.
import type { ImageStatus, ImageTagStatus } from "../api/nodeImage.ts"
import type { ReportedImages } from "../api/nodeStatusImages.ts"

/** When a tag counts as left out. */
export interface UnreportedRule {
  /**
   * The kubelet's nodeStatusMaxImages (`--node-status-max-images`): a node listing this many images
   * may have left smaller ones out. A node listing fewer lists every image it has (unless its kubelet
   * was given a smaller cap than this), so an image missing there is late or gone, not cut. Below 1
   * (-1, no cap; 0, no list): no tag is marked.
   */
  readonly maxImages: number
  /**
   * How long after a pull the kubelet is given to list the image, ms: it refreshes its image list
   * every 30 s and writes it with the node's status every 10 s, so a node that has not listed the
   * image yet is only late.
   */
  readonly graceMs: number
}

/** The kubelet's lag (about 40 s), with room. */
export const defaultUnreportedGraceMs = 120_000

/** Whether a tag is marked now, and, for a tag that will be once its grace is over, when that is. */
export interface TagJudgement {
  readonly unreported: boolean
  readonly judgeAt?: number
}

const notUnreported: TagJudgement = { unreported: false }

/**
 * Left out: the tag Succeeded, `graceMs` or more ago; the node lists `maxImages` images or more; and
 * none of its names is the image, by the tag (registry and library/ normalised) or by the
 * repository and the manifest digest the pull resolved (api/nodeStatusImages.ts).
 */
export const judgeTag = (
  image: string,
  status: ImageTagStatus,
  listing: ReportedImages,
  now: number,
  rule: UnreportedRule
): TagJudgement => {
  if (rule.maxImages < 1 || status.phase !== "Succeeded" || listing.count < rule.maxImages) return notUnreported
  const completed = status.completionTime === undefined ? Number.NaN : Date.parse(status.completionTime)
  if (Number.isNaN(completed) || listing.lists(image, status.tag, status.digest)) return notUnreported
  const due = completed + rule.graceMs
  return due > now ? { unreported: false, judgeAt: due } : { unreported: true }
}

const withMark = (status: ImageTagStatus, unreported: boolean): ImageTagStatus => {
  if ((status.unreported === true) === unreported) return status
  if (unreported) return { ...status, unreported }
  const { unreported: _dropped, ...rest } = status
  return rest
}

export interface MarkedStatuses {
  readonly imageStatuses: Readonly<Record<string, ImageStatus>>
  /** The earliest end of a grace that will mark a tag, if any: the statuses are judged again then. */
  readonly judgeAt: number | undefined
}

/**
 * The tag statuses with `unreported` as the node's list says now (the same objects where nothing
 * changes). `listing` undefined (the Node not read yet, or not there): every mark as it is, so that
 * a daemon's start does not take its marks away and put them back.
 */
export const markUnreported = (
  imageStatuses: Readonly<Record<string, ImageStatus>>,
  listing: ReportedImages | undefined,
  now: number,
  rule: UnreportedRule
): MarkedStatuses => {
  if (listing === undefined) return { imageStatuses, judgeAt: undefined }
  let judgeAt: number | undefined
  let marked: Record<string, ImageStatus> | undefined
  for (const [image, entry] of Object.entries(imageStatuses)) {
    let tags: Array<ImageTagStatus> | undefined
    entry.tags.forEach((status, i) => {
      const judgement = judgeTag(image, status, listing, now, rule)
      if (judgement.judgeAt !== undefined) judgeAt = Math.min(judgeAt ?? judgement.judgeAt, judgement.judgeAt)
      const next = withMark(status, judgement.unreported)
      if (next === status) return
      tags ??= [...entry.tags]
      tags[i] = next
    })
    if (tags === undefined) continue
    marked ??= { ...imageStatuses }
    marked[image] = { ...entry, tags }
  }
  return { imageStatuses: marked ?? imageStatuses, judgeAt }
}
