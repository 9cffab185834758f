import { Clock, Duration, Effect } from "effect"
import { apiVersion } from "../../api/meta.ts"
import type { ReferenceObject } from "../../api/nodeImage.ts"
import { statusCounters } from "../../api/nodeImageCounters.ts"
import { deleteExact } from "../../kube/deleteExact.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import type { Outcome, Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { ControllerSettings } from "../settings.ts"
import { recordEvent } from "../../kube/events.ts"
import { copiesOfJob } from "../pullSecrets/copies.ts"
import type { SourceSecretBook } from "../pullSecrets/sourceSecrets.ts"
import { jobKeyOf } from "../stores.ts"
import type { ControllerStores } from "../stores.ts"
import { patchNodeImages, patchStatus } from "../writes.ts"
import { decideNodeImage, tagFailureMessage, withFailures } from "./decide.ts"
import type { TagFailure } from "./decide.ts"
import { carriesWarmTaint } from "../../api/warmTaint.ts"
import type { NodeImageBooks } from "./state.ts"
import { nodeImageView, unreadableParts } from "./view.ts"

/** What the NodeImage reconciler reads: its stores, its settings, its books and the source secrets. */
interface NodeImageReconcileContext {
  readonly nodes: ControllerStores["nodes"]
  readonly nodeImages: ControllerStores["nodeImages"]
  readonly jobs: ControllerStores["jobs"]
  readonly settings: Pick<ControllerSettings, "secretNamespace" | "nodeReadyDelayMs" | "unresponsiveMs" | "warmTaintKey">
  readonly books: NodeImageBooks
  readonly sourceSecrets: SourceSecretBook
}

const record = recordEvent("preheat-controller")

/**
 * The controller fails tags for a daemon that went silent: status, counters and events. The status
 * is the server's copy with the failures in: the store keeps only what the controller reads of a
 * status (asRead.ts), and a merge patch replaces a tags list whole, which would lose the rest.
 */
const failTags = (ctx: NodeImageReconcileContext, name: string, failures: ReadonlyArray<TagFailure>, now: number) =>
  Effect.gen(function* () {
    if (ctx.nodeImages.get(name) === undefined) return
    const stored = yield* (yield* KubeApi).get(resources.nodeImage, { name })
    const view = nodeImageView(stored)
    const version = (image: string, tag: string) => view.spec.images?.[image]?.tags.find((t) => t.tag === tag)?.version ?? 0
    const imageStatuses = withFailures(view.status, failures, version, now)
    const status = { ...view.status, ...statusCounters(view.spec, imageStatuses), imageStatuses }
    yield* patchStatus(resources.nodeImage, ctx.nodeImages, stored, status)
    for (const failure of failures) {
      const event = {
        type: "Warning" as const,
        reason: "PullImageFailed",
        message: tagFailureMessage(failure, name)
      }
      yield* record(stored, event)
      for (const owner of failure.owners) {
        const job = owner.uid === undefined ? undefined : ctx.jobs.get(jobKeyOf(ctx.jobs, owner.uid) ?? "")
        if (job !== undefined) yield* record(job, event)
      }
    }
  })

/** The secret copies a job's tasks point at, as its reconcile writes them (none once it finished). */
const jobSecretCopies = (ctx: NodeImageReconcileContext, uid: string): ReadonlyArray<ReferenceObject> | undefined =>
  copiesOfJob(ctx.jobs.entry(jobKeyOf(ctx.jobs, uid) ?? ""), ctx.settings.secretNamespace, ctx.sourceSecrets)

/**
 * Parts of a NodeImage the controller cannot read are left alone, and said once per change: a
 * Warning on the NodeImage and a log line (the books remember what was said: a re-reconcile is silent).
 */
const announceUnreadable = (ctx: NodeImageReconcileContext, name: string) =>
  Effect.gen(function* () {
    const stored = ctx.nodeImages.get(name)
    // They follow from the spec alone: an unchanged one has nothing new to say.
    if (!ctx.books.specChanged(name, stored?.["spec"])) return
    const parts = stored === undefined ? [] : unreadableParts(stored)
    const message = parts.length === 0 ? undefined : `cannot read ${parts.join(", ")}: left alone, the other images go on`
    if (!ctx.books.unreadableNews(name, message) || message === undefined) return
    yield* Effect.logWarning("NodeImage does not decode in part").pipe(Effect.annotateLogs({ nodeImage: name, problems: message }))
    if (stored !== undefined) yield* record(stored, { type: "Warning", reason: "InvalidNodeImage", message })
  })

export const reconcileNodeImage = (
  stores: Pick<ControllerStores, "nodes" | "nodeImages" | "jobs">,
  settings: NodeImageReconcileContext["settings"],
  books: NodeImageBooks,
  sourceSecrets: SourceSecretBook
): Reconcile<KubeApi> =>
  reconcileWith({ nodes: stores.nodes, nodeImages: stores.nodeImages, jobs: stores.jobs, settings, books, sourceSecrets })

const reconcileWith = (ctx: NodeImageReconcileContext): Reconcile<KubeApi> =>
  Effect.fn("reconcile NodeImage")(function* (name: string) {
    const api = yield* KubeApi
    const now = yield* Clock.currentTimeMillis
    yield* announceUnreadable(ctx, name)
    const node = ctx.nodes.get(name)
    const decision = decideNodeImage({
      name,
      node,
      warming: node !== undefined && carriesWarmTaint(node, ctx.settings.warmTaintKey),
      nodeImage: ctx.nodeImages.view(name),
      jobExists: (uid) => jobKeyOf(ctx.jobs, uid) !== undefined,
      jobSecrets: (uid) => jobSecretCopies(ctx, uid),
      now,
      parseTime: ctx.books.parseTime,
      settings: { readyDelayMs: ctx.settings.nodeReadyDelayMs, unresponsiveMs: ctx.settings.unresponsiveMs }
    })
    const after = (wakeAt: number | undefined): Outcome =>
      wakeAt === undefined ? {} : { requeueAfter: Duration.millis(Math.max(0, wakeAt - now)) }
    switch (decision.action) {
      case "none":
        return after(decision.wakeAt)
      case "create": {
        const created: KubeObject = yield* api
          .create(resources.nodeImage, {
            apiVersion,
            kind: "NodeImage",
            metadata: { name, labels: decision.labels },
            spec: {}
          })
          .pipe(Effect.catchTag("AlreadyExists", () => api.get(resources.nodeImage, { name })))
        yield* ctx.nodeImages.written(created)
        return {}
      }
      case "delete": {
        // The NodeImage the decision saw: one re-created under the name since is another node's.
        const stored = ctx.nodeImages.get(name)
        if (stored !== undefined) yield* deleteExact(resources.nodeImage, stored)
        yield* ctx.nodeImages.removed(name)
        return {}
      }
      case "update":
        yield* patchNodeImages(ctx.nodeImages, name, decision.images, decision.labels)
        if (decision.failures.length > 0) yield* failTags(ctx, name, decision.failures, now)
        return after(decision.wakeAt)
    }
  }, Effect.mapError(retryable))
