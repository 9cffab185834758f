import { Clock, Duration, Effect, Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { deleteExact } from "../../kube/deleteExact.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import { keyOf, splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import { recordEvent } from "../../kube/events.ts"
import { controlledBy } from "../stores.ts"
import type { ControllerStores } from "../stores.ts"
import { patchStatus, reportInvalid } from "../writes.ts"
import { deprecatedFieldEvents } from "../status/deprecatedFields.ts"
import { decideImageListPullJob } from "./decide.ts"

const record = recordEvent("preheat-controller")

export const reconcileImageListPullJob = (ctx: Pick<ControllerStores, "jobs" | "listJobs">): Reconcile<KubeApi> =>
  Effect.fn("reconcile ImageListPullJob")(function* (key: string) {
    const api = yield* KubeApi
    const stored = ctx.listJobs.entry(key)
    // Children go with their owner through garbage collection.
    if (stored === undefined || stored.raw.metadata.deletionTimestamp !== undefined) return {}
    const { raw, view: decoded } = stored
    if (Result.isFailure(decoded)) {
      const message = decoded.failure.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
      if (yield* reportInvalid(resources.imageListPullJob, ctx.listJobs, raw, "Invalid", message)) {
        yield* record(raw, { type: "Warning", reason: "Invalid", message })
      }
      return {}
    }
    const uid = raw.metadata.uid
    const namespace = raw.metadata.namespace ?? ""
    const owned = controlledBy(ctx.jobs, raw)
    const children: Array<ImagePullJob> = owned.flatMap(({ view }) => (Result.isSuccess(view) ? [view.success] : []))
    const now = yield* Clock.currentTimeMillis
    const decision = decideImageListPullJob(decoded.success, children, now)
    for (const child of decision.create) {
      const created = yield* api
        .create(resources.imagePullJob, child)
        .pipe(Effect.catchTag("AlreadyExists", () => Effect.succeed(undefined)))
      if (created !== undefined) yield* ctx.jobs.written(created)
    }
    const condemned = new Set(decision.delete)
    for (const { raw: child } of owned) if (condemned.has(child.metadata.name ?? "")) yield* deleteExact(resources.imagePullJob, child)
    yield* patchStatus(resources.imageListPullJob, ctx.listJobs, raw, decision.status)
    for (const event of [...decision.events, ...deprecatedFieldEvents(decoded.success)]) yield* record(raw, event)
    if (decision.deleteJob) {
      yield* api
        .delete(resources.imageListPullJob, splitKey(keyOf(namespace, raw.metadata.name ?? "")), uid === undefined ? {} : { uid })
        .pipe(Effect.catchTag("NotFound", () => Effect.void))
      return {}
    }
    return decision.wakeAt === undefined ? {} : { requeueAfter: Duration.millis(Math.max(0, decision.wakeAt - now)) }
  }, Effect.mapError(retryable))
