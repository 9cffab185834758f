/** What the status view shows, built from the stores' objects (buildModel) and drawn by render. */

export type JobPhase = "running" | "completed" | "paused" | "invalid"

export interface NodeRow {
  readonly node: string
  readonly phase: "Pulling" | "Failed"
  /** Percent, 0..100, when the daemon reports it. */
  readonly progress?: number
  /** Epoch milliseconds the pull started, for the elapsed column. */
  readonly startTime?: number
  readonly message?: string
}

export interface JobView {
  readonly kind: "ImagePullJob" | "ImageListPullJob"
  readonly namespace: string
  readonly name: string
  /** The image (ImagePullJob) or "N images" (ImageListPullJob). */
  readonly target: string
  /** The ImageListPullJob this job belongs to, if any. */
  readonly parent?: string
  readonly phase: JobPhase
  readonly message: string
  readonly desired: number
  readonly active: number
  readonly succeeded: number
  readonly failed: number
  /** Epoch milliseconds. */
  readonly startTime?: number
  readonly completionTime?: number
  readonly nodes: ReadonlyArray<NodeRow>
}

export interface StatusModel {
  readonly namespace: string
  /** The job asked for on the command line, if any. */
  readonly job?: string
  readonly jobs: ReadonlyArray<JobView>
}
