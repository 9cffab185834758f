import type { ImageTagSpec, ImageTagStatus, NodeImage } from "./nodeImage.ts"

/** Whether a tag in a NodeImage's spec is owned by the job with this uid. */
export const owns = (tag: ImageTagSpec, uid: string): boolean => (tag.ownerReferences ?? []).some((o) => o.uid === uid)

/**
 * The daemon's report on a job's own tag on a node: the tag `image:tag` in the NodeImage's spec
 * owned by the job's uid, and the status of that tag at the spec's version. `null` when the node
 * has no such tag (not the job's, or none yet); undefined when it has and the daemon has not
 * reported on that version. Every reader judges a node for a job this way (the job's progress, the
 * warm gate, `preheat status`), so they agree; no object is made, as the job's progress asks this
 * of every node on every reconcile.
 */
export const ownTagStatus = (node: NodeImage, image: string, tag: string, uid: string): ImageTagStatus | undefined | null => {
  const spec = node.spec.images?.[image]?.tags.find((t) => t.tag === tag)
  if (spec === undefined || !owns(spec, uid)) return null
  return node.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag && (t.version ?? 0) === spec.version)
}
