import type { ImagePullJobSpec } from "../../api/imagePullJob.ts"
import type { TagPullPolicy } from "../../api/nodeImage.ts"
import { jitterSeconds } from "../jitter.ts"

const day = 24 * 60 * 60

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
      ttlSecondsAfterFinished: day + jitterSeconds(seed, -600, 600),
      activeDeadlineSeconds: Math.max(1800, timeoutSeconds)
    }
  }
  const base = ttlSecondsAfterFinished ?? activeDeadlineSeconds ?? timeoutSeconds * backoffLimit
  return {
    timeoutSeconds,
    backoffLimit,
    ttlSecondsAfterFinished: base + jitterSeconds(seed, 300, 600),
    ...(activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds })
  }
}
