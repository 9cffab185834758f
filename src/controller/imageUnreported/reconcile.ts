import { isDeepStrictEqual } from "node:util"
import { Clock, Duration, Effect, Result } from "effect"
import { quoteBounded } from "../../api/goQuote.ts"
import { parseImageReference, toNodeImageTask } from "../../api/imageReference.ts"
import type { Condition } from "../../api/meta.ts"
import { ownTagStatus } from "../../api/ownTag.ts"
import { rfc3339 } from "../../api/time.ts"
import { recordEvent } from "../../kube/events.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { JsonPatchOperation, KubeObject } from "../../kube/KubeApi.ts"
import { splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import { setCondition } from "../status/conditions.ts"
import type { ControllerStores } from "../stores.ts"
import { unreportedNodes, unreportedVerdict } from "./decide.ts"
import type { NodeReport } from "./decide.ts"

const record = recordEvent("preheat-controller")

/** When a write that met another writer's conditions is tried again if no change of the job came first. */
const conflictFallback = Duration.seconds(1)

/**
 * The conditions made `after`, only if they are still `before`: the job's own reconcile writes
 * them too (its merge patch keeps this one, which it reads and carries on), and a test on the array
 * read keeps either from dropping the other's. Counters moving meanwhile do not conflict.
 */
const conditionsPatch = (raw: KubeObject, before: ReadonlyArray<Condition> | undefined, after: ReadonlyArray<Condition>) => {
  const guard: JsonPatchOperation =
    before === undefined
      ? { op: "test", path: "/metadata/resourceVersion", value: raw.metadata.resourceVersion }
      : { op: "test", path: "/status/conditions", value: before }
  const status = raw["status"] === undefined ? [{ op: "add" as const, path: "/status", value: {} }] : []
  return [guard, ...status, { op: "add" as const, path: "/status/conditions", value: after }]
}

/**
 * A job's ImageUnreported condition (issue 39): the nodes where its pull succeeded whose daemons
 * marked its tag `unreported`, their Node status.images leaving its image out (decide.ts). Written
 * only when the condition changes, with one Warning per change of the nodes it names.
 */
export const reconcileImageUnreported = (stores: Pick<ControllerStores, "jobs" | "nodeImages">): Reconcile<KubeApi> =>
  Effect.fn("reconcile ImageUnreported")(function* (key: string) {
    const stored = stores.jobs.entry(key)
    if (stored === undefined || stored.raw.metadata.deletionTimestamp !== undefined || Result.isFailure(stored.view)) return {}
    const job = stored.view.success
    const parsed = parseImageReference(job.spec.image)
    if (Result.isFailure(parsed)) return {}
    const { name, tag } = toNodeImageTask(parsed.success)
    const uid = stored.raw.metadata.uid ?? ""
    const reports = function* (): Generator<NodeReport> {
      for (const [node, image] of stores.nodeImages.indexes.owners.imagesOf(uid)) {
        const view = image === name ? stores.nodeImages.view(node) : undefined
        if (view !== undefined) yield { node, status: ownTagStatus(view, name, tag, uid) }
      }
    }
    const previous = job.status?.conditions
    const verdict = unreportedVerdict(quoteBounded(job.spec.image), previous, unreportedNodes(reports()))
    if (verdict.condition === undefined) return {}
    const now = yield* Clock.currentTimeMillis
    const conditions = setCondition(previous, verdict.condition, rfc3339(now))
    if (isDeepStrictEqual(conditions, previous)) return {}
    const api = yield* KubeApi
    const patched = yield* api
      .patch(resources.imagePullJob, splitKey(key), conditionsPatch(stored.raw, previous, conditions), "status")
      .pipe(
        Effect.map((object) => ({ object })),
        Effect.catchTag("Conflict", () => Effect.succeed({ conflict: true })),
        Effect.catchTag("NotFound", () => Effect.succeed({ gone: true }))
      )
    if ("conflict" in patched) return { requeueAfter: conflictFallback }
    if ("gone" in patched) return {}
    yield* stores.jobs.written(patched.object)
    if (verdict.event !== undefined) yield* record(stored.raw, verdict.event)
    return {}
  }, Effect.mapError(retryable))
