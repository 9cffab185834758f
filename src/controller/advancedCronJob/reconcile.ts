import { Clock, Duration, Effect, Result } from "effect"
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import { formatFieldErrors } from "../../api/invalidObject.ts"
import { rfc3339 } from "../../api/time.ts"
import { deleteExact } from "../../kube/deleteExact.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import { recordEvent } from "../../kube/events.ts"
import { controlledBy } from "../stores.ts"
import type { ControllerStores } from "../stores.ts"
import { setCondition } from "../status/conditions.ts"
import { patchStatus } from "../writes.ts"
import { decideAdvancedCronJob } from "./decide.ts"

const record = recordEvent("preheat-controller")

/** What the AdvancedCronJob reconciler reads: the cron jobs and the list jobs they create. */
type CronStores = Pick<ControllerStores, "listJobs" | "cronJobs">

/** The ImageListPullJobs this cron job controls (by owner uid, so a re-created cron job starts afresh). */
const childrenOf = (ctx: CronStores, cron: KubeObject): ReadonlyArray<ImageListPullJob> =>
  controlledBy(ctx.listJobs, cron).flatMap(({ view }) => (Result.isSuccess(view) ? [view.success] : []))

/** Valid=False with every reason; the Warning event only when the reasons change. */
const markInvalid = (ctx: CronStores, raw: KubeObject, message: string) =>
  Effect.gen(function* () {
    const status = (raw["status"] ?? {}) as { conditions?: Parameters<typeof setCondition>[0] }
    const before = status.conditions?.find((c) => c.type === "Valid")
    const conditions = setCondition(
      status.conditions,
      {
        type: "Valid",
        status: "False",
        reason: "Invalid",
        message,
        ...(raw.metadata.generation === undefined ? {} : { observedGeneration: raw.metadata.generation })
      },
      rfc3339(yield* Clock.currentTimeMillis)
    )
    yield* patchStatus(resources.advancedCronJob, ctx.cronJobs, raw, { ...status, conditions })
    if (before?.status !== "False" || before.message !== message) yield* record(raw, { type: "Warning", reason: "Invalid", message })
  })

export const reconcileAdvancedCronJob = (ctx: CronStores): Reconcile<KubeApi> =>
  Effect.fn("reconcile AdvancedCronJob")(function* (key: string) {
    const api = yield* KubeApi
    const stored = ctx.cronJobs.entry(key)
    // Its jobs go with it through garbage collection.
    if (stored === undefined || stored.raw.metadata.deletionTimestamp !== undefined) return {}
    const { raw, view: decoded } = stored
    if (Result.isFailure(decoded)) {
      yield* markInvalid(ctx, raw, formatFieldErrors(decoded.failure.errors))
      return {}
    }
    const now = yield* Clock.currentTimeMillis
    const decision = decideAdvancedCronJob(decoded.success, childrenOf(ctx, raw), now)
    // Deletions first: Replace removes the active job before its successor starts.
    const condemned = new Set(decision.delete)
    for (const { raw: child } of controlledBy(ctx.listJobs, raw)) {
      if (condemned.has(child.metadata.name ?? "")) yield* deleteExact(resources.imageListPullJob, child)
    }
    if (decision.create !== undefined) {
      const created = yield* api
        .create(resources.imageListPullJob, decision.create)
        .pipe(Effect.catchTag("AlreadyExists", () => Effect.succeed(undefined)))
      if (created !== undefined) yield* ctx.listJobs.written(created)
    }
    yield* patchStatus(resources.advancedCronJob, ctx.cronJobs, raw, decision.status)
    for (const event of decision.events) yield* record(raw, event)
    return decision.wakeAt === undefined ? {} : { requeueAfter: Duration.millis(Math.max(0, decision.wakeAt - now)) }
  }, Effect.mapError(retryable))
