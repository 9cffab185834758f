import { isDeepStrictEqual } from "node:util"
import { Clock, Duration, Effect, Result } from "effect"
import { quoteBounded } from "../../api/goQuote.ts"
import { parseImageReference, toNodeImageTask } from "../../api/imageReference.ts"
import type { Condition } from "../../api/meta.ts"
import { reportedImages, statusImagesOf } from "../../api/nodeStatusImages.ts"
import type { ReportedImages } from "../../api/nodeStatusImages.ts"
import { ownTagStatus } from "../../api/ownTag.ts"
import { rfc3339 } from "../../api/time.ts"
import { recordEvent } from "../../kube/events.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { JsonPatchOperation, KubeObject } from "../../kube/KubeApi.ts"
import { splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { ControllerSettings } from "../settings.ts"
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
 * A job's ImageUnreported condition (issue 39): the nodes where its pull succeeded whose Node
 * status.images leaves its image out, once the kubelet has had time to list it, on nodes whose
 * list may be cut (decide.ts). Written only when the condition changes, with one Warning per
 * change of the nodes it names.
 */
export const reconcileImageUnreported = (
  stores: Pick<ControllerStores, "jobs" | "nodeImages" | "nodes">,
  settings: Pick<ControllerSettings, "nodeStatusMaxImages" | "unreportedGraceMs">
): Reconcile<KubeApi> => {
  // A node's list read once per version of it, not once per job and reconcile.
  const lists = new WeakMap<object, ReportedImages>()
  const none = reportedImages(undefined)
  const listOf = (node: string): ReportedImages => {
    const object = stores.nodes.get(node)
    const images = statusImagesOf(object)
    if (typeof images !== "object" || images === null) return none
    let reported = lists.get(images)
    if (reported === undefined) lists.set(images, (reported = reportedImages(object)))
    return reported
  }
  return Effect.fn("reconcile ImageUnreported")(function* (key: string) {
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
        if (view !== undefined) yield { node, status: ownTagStatus(view, name, tag, uid), reported: () => listOf(node) }
      }
    }
    const now = yield* Clock.currentTimeMillis
    const found = unreportedNodes(reports(), name, tag, now, settings.unreportedGraceMs, settings.nodeStatusMaxImages)
    const later = found.wakeAt === undefined ? {} : { requeueAfter: Duration.millis(Math.max(0, found.wakeAt - now)) }
    const previous = job.status?.conditions
    const verdict = unreportedVerdict(quoteBounded(job.spec.image), previous, found.nodes, settings.nodeStatusMaxImages)
    if (verdict.condition === undefined) return later
    const conditions = setCondition(previous, verdict.condition, rfc3339(now))
    if (isDeepStrictEqual(conditions, previous)) return later
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
    return later
  }, Effect.mapError(retryable))
}
