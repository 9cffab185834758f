import type { PullProgress } from "../cri/CriRuntime.ts"

/** What one attempt has seen of its pull's progress. */
export interface ProgressSeen {
  /** 0..99: 100 is for Succeeded, and the runtime reports it only as the pull returns. */
  readonly percent: number
  readonly bytes: number
}

export const nothingSeen: ProgressSeen = { percent: 0, bytes: 0 }

/** One report of the runtime against what was seen: bytes newly done (for the metric), and whether the percentage moved. */
export interface ProgressStep {
  readonly seen: ProgressSeen
  readonly addedBytes: number
  readonly moved: boolean
}

export const progressStep = (seen: ProgressSeen, progress: PullProgress): ProgressStep => {
  const percent = Math.min(99, progress.percent)
  const moved = percent > seen.percent
  return {
    seen: { percent: moved ? percent : seen.percent, bytes: Math.max(seen.bytes, progress.bytesDone) },
    addedBytes: Math.max(0, progress.bytesDone - seen.bytes),
    moved
  }
}
