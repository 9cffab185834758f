import { defaultWarmTaintKey } from "../api/warmTaint.ts"
import type { SeedCount } from "./imagePullJob/seedNodes.ts"

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
   * How long a NodeImage's task write waits for the tasks other jobs give the same node, to carry
   * them too (imagePullJob/taskWriter.ts): jobs that start together, or read the same outcomes,
   * hand out their next nodes within a few milliseconds of each other.
   */
  readonly taskWriteBatchMs: number
  /**
   * How often the Secrets unfinished jobs reference are read again (one GET each), so that their
   * copies follow edits within that time (pullSecrets/sourceSecrets.ts: why a poll, not a watch).
   */
  readonly secretResyncMs: number
  /** At most this many nodes pull from one registry host at once, across all jobs; undefined: no limit. */
  readonly maxConcurrentPullsPerRegistry: number | undefined
  /** The key of the NoSchedule startup taint preheat removes once a node is warm (nodeWarming/). */
  readonly warmTaintKey: string
  /** How long a node is held by that taint at most, from its first sighting, ms. */
  readonly warmTimeoutMs: number
  /** Seed nodes of every job without the annotation `preheat.kruise.io/seed-nodes` (imagePullJob/seedNodes.ts); undefined: none. */
  readonly seedNodes: SeedCount | undefined
  /**
   * The namespace eraser reads its exclusion lists from (eraser-system): the controller keeps one
   * there listing the images Never jobs keep warm (eraserExclusion/); undefined: none.
   */
  readonly eraserExclusionNamespace: string | undefined
}

export const defaultSettings: ControllerSettings = {
  secretNamespace: "preheat-daemon-config",
  nodeReadyDelayMs: 30_000,
  unresponsiveMs: 600_000,
  workers: 4,
  statusIntervalMs: 1000,
  nodeReportBatchMs: 10,
  taskWriteBatchMs: 20,
  secretResyncMs: 5000,
  maxConcurrentPullsPerRegistry: undefined,
  warmTaintKey: defaultWarmTaintKey,
  warmTimeoutMs: 600_000,
  seedNodes: undefined,
  eraserExclusionNamespace: undefined
}
