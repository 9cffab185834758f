import type { NodeImageStatus } from "../api/nodeImage.ts"
import { finishedInStatus, type TagTask } from "./tagTask.ts"

/** What to change in the running workers after the NodeImage changed. */
export interface WorkerPlan {
  /** Tasks to start (replacing a worker of another version of the same tag). */
  readonly start: ReadonlyArray<TagTask>
  /** Workers (by tag key) whose tag left the spec or whose version changed: stop and forget them. */
  readonly stop: ReadonlyArray<string>
}

/**
 * Workers for a spec (SPEC §3). `known` holds the version of each worker this process started,
 * running or finished: a worker that finished here is not started again before its status write
 * comes back. A version the stored status shows finished is not pulled again (that is the restart
 * rule: in-flight versions show Waiting or Pulling, so they start over).
 */
export const planWorkers = (
  tasks: ReadonlyArray<TagTask>,
  imageStatuses: NodeImageStatus["imageStatuses"],
  known: ReadonlyMap<string, number>
): WorkerPlan => {
  const wanted = new Map(tasks.map((task) => [task.key, task]))
  const stop: Array<string> = []
  for (const [key, version] of known) {
    if (wanted.get(key)?.version !== version) stop.push(key)
  }
  const start = tasks.filter((task) => known.get(task.key) !== task.version && !finishedInStatus(imageStatuses, task))
  return { start, stop }
}
