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
  /**
   * Of a running job that seeds (its Seeded condition): `seeding` while its seed nodes pull, `fanning
   * out` once they did and other nodes are still to finish.
   */
  readonly stage?: "seeding" | "fanning out"
  /** The Seeded condition's message when the seed-nodes annotation has a bad value (the job pulls without seeding). */
  readonly seedingProblem?: string
  readonly message: string
  readonly desired: number
  readonly active: number
  readonly succeeded: number
  readonly failed: number
  /** Epoch milliseconds. */
  readonly startTime?: number
  readonly completionTime?: number
  readonly nodes: ReadonlyArray<NodeRow>
  /** The digests the job's nodes resolved its image to (status.imageDigests), most nodes first. */
  readonly digests?: ReadonlyArray<{ readonly digest: string; readonly nodes: number }>
  /** The DigestMismatch condition's message while it is True: the tag moved during the job. */
  readonly digestMismatch?: string
  /**
   * Succeeded nodes whose kubelets let any pod start the image without credentials, for a job whose
   * image needs them (pull secrets, or a pull that presented credentials): PreloadedImageUnverified.
   */
  readonly unverified?: PreloadedNodes
  /** Succeeded nodes whose kubelets make a pod starting the image check its credentials with the registry: PreloadedImageReverified. */
  readonly reverified?: PreloadedNodes
}

/** Nodes of one job in one of the cases above: how many, and the first few with their kubelet's policy. */
export interface PreloadedNodes {
  readonly nodes: number
  readonly examples: ReadonlyArray<{ readonly node: string; readonly why: string }>
}

/** A tag a warming node has not pulled yet. */
export interface WarmingPull {
  /** name:tag */
  readonly image: string
  readonly phase: string
  readonly progress?: number
  readonly message?: string
}

/** A node held by preheat's startup taint until it is warm. */
export interface WarmingNode {
  readonly node: string
  /** Epoch milliseconds it is held since, where the Node says. */
  readonly since?: number
  readonly pulls: ReadonlyArray<WarmingPull>
}

export interface StatusModel {
  readonly namespace: string
  /** The job asked for on the command line, if any. */
  readonly job?: string
  readonly jobs: ReadonlyArray<JobView>
  /** The nodes held by the startup taint (when the view watches Nodes). */
  readonly warming?: ReadonlyArray<WarmingNode>
  /** Nodes by their kubelet's image verification policy, as their daemons read it (none reported: absent). */
  readonly policies?: ReadonlyArray<{ readonly policy: string; readonly nodes: number }>
}
