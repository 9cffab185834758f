import type { WorkQueue } from "../workqueue/WorkQueues.ts"
import type { ParseTime } from "./nodeImage/tagTimes.ts"
import type { JobProgress } from "./imagePullJob/progress.ts"
import type { RegistryBudget } from "./registryBudget.ts"
import type { SourceSecrets } from "./pullSecrets/sourceSecrets.ts"
import type { ControllerStores } from "./stores.ts"

export interface ControllerSettings {
  /** The namespace the daemons read pull-secret copies from. */
  readonly secretNamespace: string
  /** How long a Node must have been Ready before it gets a NodeImage (SPEC: 30 s). */
  readonly nodeReadyDelayMs: number
  /** How long a daemon may leave a tag unanswered before it is failed (SPEC: 10 min). */
  readonly unresponsiveMs: number
  /** Keys each controller reconciles at once. */
  readonly workers: number
  /** Least time between two status writes of a job that only move its counters. */
  readonly statusIntervalMs: number
  /**
   * How long a job waits after a NodeImage change before it reconciles, so that the reports of
   * many nodes finishing together are read in one reconcile rather than one each.
   */
  readonly nodeReportBatchMs: number
  /**
   * How often the Secrets unfinished jobs reference are read again (one GET each), so that their
   * copies follow edits within that time (pullSecrets/sourceSecrets.ts: why a poll, not a watch).
   */
  readonly secretResyncMs: number
  /** At most this many nodes pull from one registry host at once, across all jobs; undefined: no limit. */
  readonly maxConcurrentPullsPerRegistry: number | undefined
}

export const defaultSettings: ControllerSettings = {
  secretNamespace: "preheat-daemon-config",
  nodeReadyDelayMs: 30_000,
  unresponsiveMs: 600_000,
  workers: 4,
  statusIntervalMs: 1000,
  nodeReportBatchMs: 10,
  secretResyncMs: 5000,
  maxConcurrentPullsPerRegistry: undefined
}

/**
 * The stores the reconcilers read (stores.ts: the pull-secret copies are those in the daemons'
 * namespace only), the books they keep, and the queues the watches feed.
 */
export interface ControllerContext extends ControllerStores {
  readonly settings: ControllerSettings
  /** Workload key -> what pre-download last settled for it (workload/decide.ts), for that uid. */
  readonly preDownloads: Map<string, { readonly uid: string; readonly settled: string }>
  /** The Secrets jobs reference as pull secrets, read on demand (no list, no watch). */
  readonly sourceSecrets: SourceSecrets
  /** When each job's status was last written (ms), to space out counter-only updates. */
  readonly statusWrittenAt: Map<string, number>
  /** The spec each job's tags were last brought up to date with (a fingerprint). */
  readonly propagated: Map<string, string>
  /** Each job's targets, what they were computed from, and where each stands for the job's task. */
  readonly targets: Map<string, JobProgress>
  /** NodeImage name -> the jobs whose write to it conflicted: woken when a newer version arrives. */
  readonly awaitingNewer: Map<string, Set<string>>
  /** Nodes pulling and held back per registry, across jobs (`--max-concurrent-pulls-per-registry`). */
  readonly registries: RegistryBudget
  /** Tag times as the NodeImage decisions read them, parsed once for all nodes (nodeImage/tagTimes.ts). */
  readonly parseTime: ParseTime
  /** Bumped when the node set or node labels change (NodeImages) and when pods move. */
  readonly placement: { nodes: number; pods: number }
  readonly queues: {
    readonly nodeImage: WorkQueue
    readonly imagePullJob: WorkQueue
    readonly imageListPullJob: WorkQueue
    readonly advancedCronJob: WorkQueue
    readonly pullSecrets: WorkQueue
    readonly workload: WorkQueue
  }
}

/** The one key of the pull-secret copies reconcile: they are planned together. */
export const allSecretCopies = "all"

/**
 * Drops what the controller remembers of a job that is gone, so deleted jobs leave nothing behind.
 * Returns the jobs to wake: those waiting for the registry room the job held.
 */
export const forgetJob = (context: ControllerContext, key: string): ReadonlyArray<string> => {
  context.targets.delete(key)
  context.propagated.delete(key)
  context.statusWrittenAt.delete(key)
  return context.registries.forget(key)
}
