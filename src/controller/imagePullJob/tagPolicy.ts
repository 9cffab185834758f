import type { ImagePullJobSpec } from "../../api/imagePullJob.ts"
import type { TagPullPolicy } from "../../api/nodeImage.ts"
import { maxInt32 } from "../../api/schemaExtras.ts"
import { jitterSeconds } from "../jitter.ts"

const day = 24 * 60 * 60

/**
 * The longest TTL a tag gets: the tag's ttlSecondsAfterFinished is an int32 (as upstream's), about
 * 68 years. A TTL derived from a job's large values (timeoutSeconds x backoffLimit is up to 2^62)
 * saturates here instead of overflowing into a value the API server and the daemon refuse.
 */
export const maxTagTtlSeconds = maxInt32

/**
 * The jitter moves in steps (1 min after a one-shot job, 2 min around a day) rather than by the
 * second: still spread over the whole range, and across waves by when each node finished, but
 * the tags a job writes in one wave then come in a few variants, which the stores keep as one
 * object each: by the second, nearly every tag of a job on 10,000 nodes was an object of its own.
 */
const stepped = (seed: string, min: number, max: number, step: number): number =>
  min + step * jitterSeconds(seed, 0, Math.floor((max - min) / step))

type JobPolicy = Pick<ImagePullJobSpec, "completionPolicy" | "pullPolicy">

/**
 * The pull policy a job writes into its tag on one node (SPEC §2 ImagePullJob 3). The TTL keeps
 * the finished tag around long enough to be seen, then lets the NodeImage controller drop it:
 * for a Never job that drop is what makes the node pull again the next day.
 */
export const tagPullPolicy = (job: JobPolicy, seed: string): TagPullPolicy => {
  const { timeoutSeconds, backoffLimit } = job.pullPolicy
  const { activeDeadlineSeconds, ttlSecondsAfterFinished, type } = job.completionPolicy
  if (type === "Never") {
    return {
      timeoutSeconds,
      backoffLimit,
      ttlSecondsAfterFinished: day + stepped(seed, -600, 600, 120),
      activeDeadlineSeconds: Math.max(1800, timeoutSeconds)
    }
  }
  const base = ttlSecondsAfterFinished ?? activeDeadlineSeconds ?? timeoutSeconds * backoffLimit
  return {
    timeoutSeconds,
    backoffLimit,
    ttlSecondsAfterFinished: Math.min(maxTagTtlSeconds, base + stepped(seed, 300, 600, 60)),
    ...(activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds })
  }
}
