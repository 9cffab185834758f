import { Clock, Effect } from "effect"
import { Metrics } from "../ops/metrics.ts"
import type { WorkerContext } from "./pullWorker.ts"
import { failedStatus } from "./tagStatus.ts"
import type { TagTask } from "./tagTask.ts"

/** The reason of the Warning about a tag the daemon cannot read, on the NodeImage and on the jobs that asked for it. */
export const invalidTagReason = "InvalidPullTask"

/**
 * The worker of a tag the daemon cannot read (nodeImageSpec.ts): failed at once in the decoder's
 * words (`spec.images["nginx"].tags[0].pullPolicy.timeoutSeconds: ...`), counted and announced,
 * never pulled. It fails alone: the node's other tags go on (issue 24).
 */
export const failUnreadableTag = (task: TagTask & { readonly unreadable: string }, context: WorkerContext) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* Effect.logWarning("NodeImage tag does not decode; failed without pulling").pipe(
      Effect.annotateLogs({ node: context.node, image: task.reference, version: task.version, problem: task.unreadable })
    )
    yield* context.report(failedStatus(task, now, now, 0, task.unreadable))
    yield* (yield* Metrics).recordPull({ result: "failed", reason: "invalid_spec" }, 0)
    yield* context.finished({ succeeded: false, message: `${task.unreadable} (node ${context.node})`, reason: invalidTagReason })
  }).pipe(Effect.withSpan("PullWorker.unreadable", { attributes: { node: context.node, image: task.reference } }))
