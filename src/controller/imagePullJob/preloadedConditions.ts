import { preloadedImageReverified, preloadedImageUnverified } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import type { PreloadedNodes, PreloadedSummary } from "./preloadedTally.ts"

export interface PreloadedVerdicts {
  /** The conditions to set (none while the job's nodes never had either). */
  readonly conditions: ReadonlyArray<Omit<Condition, "lastTransitionTime">>
  /** A Warning per condition that turned True, or whose policies changed. */
  readonly events: ReadonlyArray<ObjectEvent>
}

/** `(NeverVerifyPreloadedImages, NeverVerify)`: the part of a message that says why; a new one is news. */
const policies = (group: PreloadedNodes) => `(kubelet: ${group.whys.join(", ")})`

/** The first nodes, and that there are more: steady while more nodes come (the count is in the event only). */
const nodeList = (group: PreloadedNodes, counted: boolean): string => {
  const more = group.nodes - group.examples.length
  const named = group.examples.join(", ")
  if (!counted) return more > 0 ? `${named}, ...` : named
  return `${group.nodes} ${group.nodes === 1 ? "node" : "nodes"} (${named}${more > 0 ? `, and ${more} more` : ""})`
}

const unverifiedMessage = (image: string, group: PreloadedNodes, counted: boolean) =>
  `${image} needs registry credentials, but any pod can start it without them on ${nodeList(group, counted)}: ` +
  `their kubelets do not verify images they did not pull ${policies(group)}; set AlwaysVerify, or ` +
  "NeverVerifyAllowlistedImages without this image, to have pods show their own"

const reverifiedMessage = (image: string, group: PreloadedNodes, counted: boolean) =>
  `pods starting ${image} check their credentials with the registry first on ${nodeList(group, counted)}: ` +
  `their kubelets verify images they did not pull ${policies(group)}; imagePullPolicy IfNotPresent pulls again at start, ` +
  "Never fails unless the kubelet pulled the image before for the same credentials; " +
  "`preheat allowlist` prints entries for preloadedImagesVerificationAllowlist"

interface Kind {
  readonly type: string
  readonly trueReason: string
  readonly falseReason: string
  readonly falseMessage: string
  readonly message: (image: string, group: PreloadedNodes, counted: boolean) => string
}

const unverified: Kind = {
  type: preloadedImageUnverified,
  trueReason: "KubeletSkipsVerification",
  falseReason: "NoNodeSkipsVerification",
  falseMessage: "no node's kubelet lets pods start the image without credentials",
  message: unverifiedMessage
}

const reverified: Kind = {
  type: preloadedImageReverified,
  trueReason: "KubeletVerifiesAtStart",
  falseReason: "NoNodeVerifiesAtStart",
  falseMessage: "no node's kubelet checks pods' credentials for the image with the registry",
  message: reverifiedMessage
}

const verdict = (
  kind: Kind,
  image: string,
  previous: ReadonlyArray<Condition> | undefined,
  group: PreloadedNodes | undefined,
  conditions: Array<Omit<Condition, "lastTransitionTime">>,
  events: Array<ObjectEvent>
) => {
  const before = previous?.find((c) => c.type === kind.type)
  if (group === undefined) {
    if (before !== undefined) conditions.push({ type: kind.type, status: "False", reason: kind.falseReason, message: kind.falseMessage })
    return
  }
  conditions.push({ type: kind.type, status: "True", reason: kind.trueReason, message: kind.message(image, group, false) })
  // News when it starts and when the policies behind it change, not with each node that joins:
  // a rollout over the nodes of one policy is one Warning, not one per node.
  if (before?.status !== "True" || before.message?.includes(policies(group)) !== true) {
    events.push({ type: "Warning", reason: kind.type, message: kind.message(image, group, true) })
  }
}

/**
 * The job's two conditions on what the nodes' kubelets do with its image, which they did not pull
 * (KEP-2535, api/kubeletImageVerification.ts):
 * - PreloadedImageUnverified, for a job whose image needs credentials (it names pull secrets, or
 *   a node's pull presented some): True while nodes let any pod start it without credentials;
 * - PreloadedImageReverified, for any job: True while nodes make a pod starting it check its
 *   credentials with the registry first (a round trip at start, or a Never pod failing).
 * Each with a Warning when it turns True and when the policies behind it change; once it held it
 * stays, as False, as DigestMismatch does. Nodes whose policy is unknown count for neither.
 */
export const preloadedVerdicts = (
  image: string,
  previous: ReadonlyArray<Condition> | undefined,
  needsCredentials: boolean,
  summary: PreloadedSummary
): PreloadedVerdicts => {
  const conditions: Array<Omit<Condition, "lastTransitionTime">> = []
  const events: Array<ObjectEvent> = []
  const credentialed = needsCredentials || summary.authenticated > 0
  verdict(unverified, image, previous, credentialed ? summary.unverified : undefined, conditions, events)
  verdict(reverified, image, previous, summary.reverified, conditions, events)
  return { conditions, events }
}
