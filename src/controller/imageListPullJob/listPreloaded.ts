import { quoteBounded } from "../../api/goQuote.ts"
import { type ImagePullJob, preloadedImageReverified, preloadedImageUnverified } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"

/** The images named in one message; the rest are counted. */
const namedAtMost = 5

export interface ListPreloadedVerdicts {
  readonly conditions: ReadonlyArray<Omit<Condition, "lastTransitionTime">>
  readonly events: ReadonlyArray<ObjectEvent>
}

interface Kind {
  readonly type: string
  readonly trueReason: string
  readonly falseReason: string
  readonly falseMessage: string
  readonly says: string
}

const kinds: ReadonlyArray<Kind> = [
  {
    type: preloadedImageUnverified,
    trueReason: "KubeletSkipsVerification",
    falseReason: "NoNodeSkipsVerification",
    falseMessage: "no image needing credentials can be started without them on its nodes",
    says: "need registry credentials, but any pod can start them without them on some of their nodes (their kubelets do not verify images they did not pull)"
  },
  {
    type: preloadedImageReverified,
    trueReason: "KubeletVerifiesAtStart",
    falseReason: "NoNodeVerifiesAtStart",
    falseMessage: "no image's nodes make pods check their credentials with the registry at start",
    says: "are checked with the registry when pods start them on some of their nodes (their kubelets verify images they did not pull)"
  }
]

/**
 * The list job's PreloadedImageUnverified and PreloadedImageReverified: True while a child has
 * its own (whose message names the nodes and policies), naming those images, with a Warning when
 * it turns True; False, once it held, when no child has it.
 */
export const listPreloadedVerdicts = (
  previous: ReadonlyArray<Condition> | undefined,
  children: ReadonlyArray<ImagePullJob>
): ListPreloadedVerdicts => {
  const conditions: Array<Omit<Condition, "lastTransitionTime">> = []
  const events: Array<ObjectEvent> = []
  for (const kind of kinds) {
    const before = previous?.find((c) => c.type === kind.type)
    const images = children
      .filter((c) => c.status?.conditions?.some((x) => x.type === kind.type && x.status === "True") === true)
      .map((c) => `${quoteBounded(c.spec.image)} (ImagePullJob ${c.metadata.name ?? ""})`)
      .sort()
    if (images.length === 0) {
      if (before !== undefined) conditions.push({ type: kind.type, status: "False", reason: kind.falseReason, message: kind.falseMessage })
      continue
    }
    const named = images.slice(0, namedAtMost)
    const rest = images.length - named.length
    const message = `${images.length} of the images ${kind.says}: ${named.join(", ")}${rest > 0 ? `, and ${rest} more` : ""}`
    conditions.push({ type: kind.type, status: "True", reason: kind.trueReason, message })
    // Once when it turns True: on a cluster of one policy every child comes to have it, one after
    // the other, and each says so itself.
    if (before?.status !== "True") events.push({ type: "Warning", reason: kind.type, message })
  }
  return { conditions, events }
}
