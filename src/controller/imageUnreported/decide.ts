// Where a job's image is on nodes that do not say so (issue 39): the nodes whose Node status.images
// leaves it out although the job's pull succeeded there, and the job's ImageUnreported condition.
// The scheduler's ImageLocality plugin scores a node by the images in that list only, so there the
// image preheat put on the node counts for nothing. Each node's daemon judges its own list and
// marks the tag (daemon/unreportedTags.ts): the controller keeps no Node's status.images (issue 40).
import { imageUnreported } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ImageTagStatus } from "../../api/nodeImage.ts"
import type { ObjectEvent } from "../../kube/events.ts"

/** One node where the job owns a tag of its image, and the daemon's report on it (api/ownTag.ts). */
export interface NodeReport {
  readonly node: string
  readonly status: ImageTagStatus | undefined | null
}

/** Whether the daemon's report says its Node leaves the image out: a Succeeded tag marked `unreported`. */
export const leftOut = (status: ImageTagStatus | undefined | null): boolean => status?.phase === "Succeeded" && status.unreported === true

/** The nodes that pulled the job's image but do not list it, sorted by name. */
export const unreportedNodes = (reports: Iterable<NodeReport>): Array<string> => {
  const nodes: Array<string> = []
  for (const { node, status } of reports) if (leftOut(status)) nodes.push(node)
  return nodes.sort()
}

/** The nodes named in one message: enough to go and look, bounded whatever the job's size. */
const named = 3

const nodeList = (nodes: ReadonlyArray<string>, counted: boolean): string => {
  const shown = nodes.slice(0, named).join(", ")
  const more = nodes.length - named
  if (!counted) return more > 0 ? `${shown}, ...` : shown
  return `${nodes.length} ${nodes.length === 1 ? "node" : "nodes"} (${shown}${more > 0 ? `, and ${more} more` : ""})`
}

const message = (image: string, nodes: ReadonlyArray<string>, counted: boolean): string =>
  `${image} is on ${nodeList(nodes, counted)} but ${nodes.length === 1 ? "its" : "their"} Node status.images leaves it out ` +
  "(a kubelet lists only a node's largest images): the scheduler's ImageLocality plugin does not count it there; " +
  "raise the kubelets' nodeStatusMaxImages (-1: no limit) to have it counted"

export interface UnreportedVerdict {
  /** The condition to set, or none (no node ever left the image out). */
  readonly condition: Omit<Condition, "lastTransitionTime"> | undefined
  /** The Warning to emit: the condition turned True, or the nodes it names changed. */
  readonly event: ObjectEvent | undefined
}

/**
 * The job's ImageUnreported condition: True while nodes that pulled the image leave it out of
 * their status.images, naming the first three by name (so the message moves when they change, not
 * with every node that joins them: the count is in the event only); a Warning when it turns True
 * and when that message changes, never on a reconcile that changed nothing. Once it held it stays,
 * as False, as DigestMismatch does; a job whose nodes always listed the image does not carry it.
 */
export const unreportedVerdict = (
  image: string,
  previous: ReadonlyArray<Condition> | undefined,
  nodes: ReadonlyArray<string>
): UnreportedVerdict => {
  const before = previous?.find((c) => c.type === imageUnreported)
  if (nodes.length === 0) {
    if (before === undefined) return { condition: undefined, event: undefined }
    const falseMessage = "every node that pulled the image lists it in status.images"
    return { condition: { type: imageUnreported, status: "False", reason: "ListedByNodes", message: falseMessage }, event: undefined }
  }
  const steady = message(image, nodes, false)
  const news = before?.status !== "True" || before.message !== steady
  return {
    condition: { type: imageUnreported, status: "True", reason: "NodeStatusImagesFull", message: steady },
    event: news ? { type: "Warning", reason: imageUnreported, message: message(image, nodes, true) } : undefined
  }
}
