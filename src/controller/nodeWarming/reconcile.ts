import { Clock, Duration, Effect, Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { recordEvent } from "../../kube/events.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { ControllerSettings } from "../settings.ts"
import type { ControllerStores } from "../stores.ts"
import { decideWarming, notWarmedText } from "./decide.ts"
import type { WarmDecision } from "./decide.ts"
import { gatesOf } from "./gates.ts"
import type { NodeWarmingBooks } from "./state.ts"
import { carriesWarmTaint, removeWarmTaint } from "../../api/warmTaint.ts"

/** What the node warming reconciler reads: its stores, its settings and its books. */
interface NodeWarmingContext {
  readonly nodes: ControllerStores["nodes"]
  readonly nodeImages: ControllerStores["nodeImages"]
  readonly jobs: ControllerStores["jobs"]
  readonly settings: Pick<ControllerSettings, "warmTaintKey" | "warmTimeoutMs">
  readonly books: NodeWarmingBooks
}

const record = recordEvent("preheat-controller")

/** When a release whose write conflicted is tried again if no newer Node arrived first. */
const conflictFallback = Duration.seconds(1)

const liveJobs = function* (jobs: ControllerStores["jobs"]): Generator<ImagePullJob> {
  for (const { view } of jobs.entries()) if (Result.isSuccess(view)) yield view.success
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10}s`

/** The events of a release: one on the Node, one on each job that had to warm it. */
const releaseEvents = (ctx: NodeWarmingContext, node: KubeObject, decision: Extract<WarmDecision, { action: "release" }>, took: number) =>
  Effect.gen(function* () {
    const name = node.metadata.name ?? ""
    const key = ctx.settings.warmTaintKey
    const why =
      decision.outcome === "timeout"
        ? `after the warm timeout (${seconds(ctx.settings.warmTimeoutMs)})`
        : decision.outcome === "failed"
          ? "because a warming pull failed"
          : "now that it is warm"
    const nodeEvent: ObjectEvent =
      decision.outcome === "warmed"
        ? {
            type: "Normal",
            reason: "Warmed",
            message:
              decision.warmed.length === 0
                ? `taint ${key} removed: no job must warm the node`
                : `taint ${key} removed ${seconds(took)} after it was first seen: the images of ${decision.warmed.map((g) => g.job).join(", ")} are on the node`
          }
        : {
            type: "Warning",
            reason: "ReleasedUnwarmed",
            message: `taint ${key} removed ${why}, ${seconds(took)} after it was first seen; not warmed: ${notWarmedText(decision.notWarmed)}`
          }
    yield* record({ ...node, apiVersion: "v1", kind: "Node" }, nodeEvent)
    for (const gate of [...decision.warmed, ...decision.notWarmed]) {
      const job = ctx.jobs.get(gate.job)
      if (job === undefined) continue
      const event: ObjectEvent =
        gate.state.phase === "succeeded"
          ? { type: "Normal", reason: "NodeReleased", message: `node ${name} released ${why}: image pulled there, taint ${key} removed` }
          : {
              type: "Warning",
              reason: "NodeReleasedUnwarmed",
              message: `node ${name} released ${why}: image ${gate.image} not warmed there (${gate.state.why})`
            }
      yield* record(job, event)
    }
  })

export const reconcileNodeWarming = (
  stores: Pick<ControllerStores, "nodes" | "nodeImages" | "jobs">,
  settings: NodeWarmingContext["settings"],
  books: NodeWarmingBooks
): Reconcile<KubeApi> => reconcileWith({ nodes: stores.nodes, nodeImages: stores.nodeImages, jobs: stores.jobs, settings, books })

/**
 * One Node (issue 27): while it carries preheat's startup taint, hold it until the jobs that must
 * warm it succeeded there, one of them failed, or the warm timeout; then remove the taint with a
 * write conditional on the taints read, and say so on the Node and the jobs.
 */
const reconcileWith = (ctx: NodeWarmingContext): Reconcile<KubeApi> =>
  Effect.fn("reconcile node warming")(function* (name: string) {
    const now = yield* Clock.currentTimeMillis
    const node = ctx.nodes.get(name)
    const tainted = node !== undefined && carriesWarmTaint(node, ctx.settings.warmTaintKey)
    if (node === undefined || !tainted) {
      ctx.books.forget(name)
      return {}
    }
    const gates = gatesOf({ name, labels: node.metadata.labels ?? {} }, liveJobs(ctx.jobs), ctx.nodeImages.view(name))
    const decision = decideWarming({
      tainted,
      firstSeen: ctx.books.firstSeen(name),
      now,
      timeoutMs: ctx.settings.warmTimeoutMs,
      gates
    })
    switch (decision.action) {
      case "none":
        return {}
      case "hold":
        if (ctx.books.firstSeen(name) === undefined) {
          yield* Effect.logInfo("node warming: held until its images are on it").pipe(
            Effect.annotateLogs({ node: name, jobs: gates.map((g) => g.job).join(",") })
          )
        }
        ctx.books.holding(name, decision.firstSeen)
        return { requeueAfter: Duration.millis(Math.max(0, decision.wakeAt - now)) }
      case "release": {
        ctx.books.holding(name, decision.firstSeen)
        const api = yield* KubeApi
        const patched = yield* api.patch(resources.node, { name }, removeWarmTaint(node, ctx.settings.warmTaintKey)).pipe(
          Effect.map((object) => ({ object })),
          // Another writer changed the taints since the store's copy: decided again on theirs, which
          // the watch brings (and wakes this node with); the fallback covers a watch that lags. No
          // GET: the controller may patch Nodes and list and watch them, nothing more.
          Effect.catchTag("Conflict", () => Effect.succeed({ conflict: true })),
          Effect.catchTag("NotFound", () => Effect.succeed({ gone: true }))
        )
        if ("conflict" in patched) return { requeueAfter: conflictFallback }
        if ("gone" in patched) {
          ctx.books.forget(name)
          return {}
        }
        yield* ctx.nodes.written(patched.object)
        const took = now - decision.firstSeen
        ctx.books.forget(name, { outcome: decision.outcome, seconds: took / 1000 })
        yield* Effect.logInfo("node warming: taint removed").pipe(
          Effect.annotateLogs({ node: name, outcome: decision.outcome, seconds: took / 1000 })
        )
        yield* releaseEvents(ctx, node, decision, took)
        return {}
      }
    }
  }, Effect.mapError(retryable))
