import { quoteBounded } from "../../api/goQuote.ts"
import { digestMismatch, type ImagePullJob } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"

/** The images named in one message; the rest are counted. */
const namedAtMost = 5

export interface ListDigestVerdict {
  readonly condition: Omit<Condition, "lastTransitionTime"> | undefined
  readonly event: ObjectEvent | undefined
}

/**
 * The list job's DigestMismatch: True while a child's nodes resolved its image to more than one
 * digest (the child's own condition, whose message names the digests and nodes), naming those
 * images; a Warning when the set of them changes; False, once it held, when no child has it.
 * Editing the list job's template replaces its children: with imagePullPolicy Always the new
 * ones pull again everywhere and converge.
 */
export const listDigestVerdict = (
  previous: ReadonlyArray<Condition> | undefined,
  children: ReadonlyArray<ImagePullJob>
): ListDigestVerdict => {
  const before = previous?.find((c) => c.type === digestMismatch)
  const moved = children
    .filter((c) => c.status?.conditions?.some((x) => x.type === digestMismatch && x.status === "True") === true)
    .map((c) => `${quoteBounded(c.spec.image)} (ImagePullJob ${c.metadata.name ?? ""})`)
    .sort()
  if (moved.length === 0) {
    if (before === undefined) return { condition: undefined, event: undefined }
    return {
      condition: { type: digestMismatch, status: "False", reason: "OneDigest", message: "each image resolved to one digest on its nodes" },
      event: undefined
    }
  }
  const named = moved.slice(0, namedAtMost)
  const rest = moved.length - named.length
  const message =
    `${moved.length} of the images resolved to more than one digest on their nodes (the tag moved): ${named.join(", ")}` +
    (rest > 0 ? `, and ${rest} more` : "")
  const news = before?.status !== "True" || before.message !== message
  return {
    condition: { type: digestMismatch, status: "True", reason: "TagMoved", message },
    event: news ? { type: "Warning", reason: digestMismatch, message } : undefined
  }
}
