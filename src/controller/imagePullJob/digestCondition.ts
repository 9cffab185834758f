import { digestMismatch, type ImageDigestCount } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import type { DigestNodes } from "./digestTally.ts"

/** The digests named in one message; the rest are counted (each one is a move of the tag). */
const namedAtMost = 5

export interface DigestVerdict {
  /** The condition to set, or none (the job's nodes never disagreed). */
  readonly condition: Omit<Condition, "lastTransitionTime"> | undefined
  /** The Warning to emit: the nodes disagree and the set of digests is new. */
  readonly event: ObjectEvent | undefined
}

const sameDigests = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  const set = new Set(a)
  return a.length === b.length && b.every((d) => set.has(d))
}

/**
 * The message: the digests in digest order with the first nodes of each, so that it changes when
 * a digest comes or goes (or while a digest has fewer nodes than it names), not with every count;
 * the counts are in status.imageDigests.
 */
export const mismatchMessage = (image: string, digests: ReadonlyArray<DigestNodes>): string => {
  const ordered = [...digests].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0))
  const named = ordered.slice(0, namedAtMost).map(({ digest, examples, nodes }) => {
    const more = nodes > examples.length ? ", ..." : ""
    return `${digest} on ${examples.join(", ")}${more}`
  })
  const rest = ordered.length - named.length
  return (
    `${image} resolved to ${digests.length} digests on the job's nodes (the tag moved during the job): ${named.join("; ")}` +
    (rest > 0 ? `; and ${rest} more digests` : "")
  )
}

/**
 * The job's DigestMismatch condition: True while its nodes resolved the image to more than one
 * digest, with a Warning when that first shows and each time the set of digests changes (not on
 * every reconcile, nor when only the counts move). Once they agree again (imagePullPolicy Always
 * and a new generation) it stays as False, as PullSecretInvalid does, so lastTransitionTime says
 * when; a job whose nodes never disagreed does not carry it.
 */
export const digestVerdict = (
  image: string,
  previousConditions: ReadonlyArray<Condition> | undefined,
  previousDigests: ReadonlyArray<ImageDigestCount> | undefined,
  digests: ReadonlyArray<DigestNodes>
): DigestVerdict => {
  const before = previousConditions?.find((c) => c.type === digestMismatch)
  if (digests.length <= 1) {
    if (before === undefined) return { condition: undefined, event: undefined }
    const message = digests.length === 0 ? "no node has reported a digest yet" : `every node resolved ${image} to ${digests[0]!.digest}`
    return { condition: { type: digestMismatch, status: "False", reason: "OneDigest", message }, event: undefined }
  }
  const message = mismatchMessage(image, digests)
  const news =
    before?.status !== "True" ||
    !sameDigests(
      (previousDigests ?? []).map((d) => d.digest),
      digests.map((d) => d.digest)
    )
  return {
    condition: { type: digestMismatch, status: "True", reason: "TagMoved", message },
    event: news ? { type: "Warning", reason: digestMismatch, message } : undefined
  }
}
