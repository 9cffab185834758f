import { Effect, Result } from "effect"
import { matchesLabelSelector } from "../api/labelSelector.ts"
import type { Change } from "../kube/informer.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { keyOf, objectKey } from "../kube/objectKey.ts"
import { allSecretCopies, forgetJob } from "./context.ts"
import type { ControllerContext } from "./context.ts"
import { decodedJob } from "./decoded.ts"
import { nodeSelected } from "./imagePullJob/targets.ts"
import { nodeImageView } from "./nodeImage/view.ts"
import { changedOwners, nodeImageChanged } from "./ownerIndex.ts"

const before = (change: Change): KubeObject | undefined => (change.type === "added" ? undefined : change.old)
const after = (change: Change): KubeObject | undefined => (change.type === "deleted" ? undefined : change.current)

const sameLabels = (a: KubeObject | undefined, b: KubeObject | undefined): boolean =>
  JSON.stringify(a?.metadata.labels ?? {}) === JSON.stringify(b?.metadata.labels ?? {})

const enqueueAll = (ctx: ControllerContext, keys: Iterable<string>, after?: number) =>
  Effect.forEach(keys, (key) => ctx.queues.imagePullJob.add(key, after), { discard: true })

/** Jobs whose node selection may change when a NodeImage with these labels comes or goes. */
const jobsSelectingNode = (ctx: ControllerContext, name: string, labelSets: ReadonlyArray<Readonly<Record<string, string>>>) => {
  const keys: Array<string> = []
  for (const raw of ctx.jobs.values()) {
    const job = decodedJob(raw)
    if (Result.isFailure(job)) continue
    const { podSelector, selector } = job.success.spec
    if (podSelector !== undefined) continue
    if (labelSets.some((labels) => nodeSelected(selector, name, labels))) keys.push(objectKey(raw))
  }
  return keys
}

/**
 * What each change makes worth reconciling. Only the jobs a change concerns are enqueued: a
 * NodeImage change wakes the owners of the tags that changed, not every job of the image
 * (SPEC §4.8).
 */
export const changeHandlers = (context: () => ControllerContext) => ({
  node: (change: Change) => context().queues.nodeImage.add((before(change) ?? after(change))!.metadata.name ?? ""),

  nodeImage: (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      const old = before(change)
      const current = after(change)
      const name = (old ?? current)!.metadata.name ?? ""
      const previousView = old === undefined ? undefined : nodeImageView(old)
      const currentView = current === undefined ? undefined : nodeImageView(current)
      ctx.owners.update(name, previousView, currentView)
      const jobs = new Set<string>(ctx.awaitingNewer.get(name))
      ctx.awaitingNewer.delete(name)
      for (const uid of changedOwners(previousView, currentView)) {
        const key = ctx.jobKeyByUid.get(uid)
        if (key === undefined) continue
        jobs.add(key)
        ctx.targets.get(key)?.touched(name)
      }
      const membership =
        old === undefined ||
        current === undefined ||
        !sameLabels(old, current) ||
        old.metadata.deletionTimestamp !== current.metadata.deletionTimestamp
      if (membership) {
        ctx.placement.nodes++
        const labels = [old, current].flatMap((o) => (o === undefined ? [] : [o.metadata.labels ?? {}]))
        for (const key of jobsSelectingNode(ctx, name, labels)) jobs.add(key)
      }
      const own = nodeImageChanged(previousView, currentView) ? ctx.queues.nodeImage.add(name) : Effect.void
      return Effect.andThen(own, enqueueAll(ctx, jobs, ctx.settings.nodeReportBatchMs))
    }),

  imagePullJob: (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      const object = (after(change) ?? before(change))!
      const key = objectKey(object)
      const uid = object.metadata.uid ?? ""
      const effects: Array<Effect.Effect<void>> = []
      if (change.type === "deleted") {
        ctx.jobKeyByUid.delete(uid)
        for (const waiter of forgetJob(ctx, key)) effects.push(ctx.queues.imagePullJob.add(waiter))
        // Tags of a job that went without its finalizer are cleaned up by their NodeImages.
        for (const node of ctx.owners.nodesOf(uid)) effects.push(ctx.queues.nodeImage.add(node))
      } else {
        ctx.jobKeyByUid.set(uid, key)
        effects.push(ctx.queues.imagePullJob.add(key))
      }
      for (const owner of object.metadata.ownerReferences ?? []) {
        if (owner.kind === "ImageListPullJob" && owner.controller === true) {
          effects.push(ctx.queues.imageListPullJob.add(keyOf(object.metadata.namespace, owner.name)))
        }
      }
      const secretsBefore = JSON.stringify((before(change)?.["spec"] as { pullSecrets?: unknown } | undefined)?.pullSecrets)
      const secretsAfter = JSON.stringify((after(change)?.["spec"] as { pullSecrets?: unknown } | undefined)?.pullSecrets)
      const deleting = after(change)?.metadata.deletionTimestamp !== before(change)?.metadata.deletionTimestamp
      if (secretsBefore !== secretsAfter || deleting || change.type === "deleted") {
        effects.push(ctx.queues.pullSecrets.add(allSecretCopies))
      }
      return Effect.all(effects, { discard: true })
    }),

  imageListPullJob: (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      const object = (after(change) ?? before(change))!
      // A scheduled job that starts, finishes or goes wakes the cron job that created it.
      const owners = (object.metadata.ownerReferences ?? []).filter((o) => o.kind === "AdvancedCronJob" && o.controller === true)
      return Effect.andThen(
        ctx.queues.imageListPullJob.add(objectKey(object)),
        Effect.forEach(owners, (o) => ctx.queues.advancedCronJob.add(keyOf(object.metadata.namespace, o.name)), { discard: true })
      )
    }),

  advancedCronJob: (change: Change) => context().queues.advancedCronJob.add(objectKey((after(change) ?? before(change))!)),

  pod: (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      const old = before(change)
      const current = after(change)
      const placement = (pod: KubeObject | undefined) =>
        JSON.stringify([
          pod?.["spec"] && (pod["spec"] as { nodeName?: string }).nodeName,
          (pod?.["status"] as { phase?: string } | undefined)?.phase,
          pod?.metadata.labels,
          pod?.metadata.deletionTimestamp
        ])
      if (placement(old) === placement(current)) return Effect.void
      ctx.placement.pods++
      const namespace = (old ?? current)!.metadata.namespace
      const labelSets = [old, current].flatMap((p) => (p === undefined ? [] : [p.metadata.labels ?? {}]))
      const keys: Array<string> = []
      for (const raw of ctx.jobs.values()) {
        if (raw.metadata.namespace !== namespace) continue
        const job = decodedJob(raw)
        const podSelector = Result.isSuccess(job) ? job.success.spec.podSelector : undefined
        if (podSelector !== undefined && labelSets.some((labels) => matchesLabelSelector(podSelector, labels))) {
          keys.push(objectKey(raw))
        }
      }
      return enqueueAll(ctx, keys)
    }),

  /** A copy changed or went (by hand, say): the copies are planned again. */
  secretCopy: (_change: Change) => context().queues.pullSecrets.add(allSecretCopies),

  /** Source secrets that changed, appeared or went since the last resync: their jobs and the copies. */
  sourceSecretsChanged: (keys: ReadonlyArray<string>) =>
    Effect.suspend(() => {
      if (keys.length === 0) return Effect.void
      const ctx = context()
      const changed = new Set(keys)
      const jobs: Array<string> = []
      for (const raw of ctx.jobs.values()) {
        const job = decodedJob(raw)
        if (Result.isFailure(job)) continue
        const namespace = raw.metadata.namespace
        if ((job.success.spec.pullSecrets ?? []).some((name) => changed.has(keyOf(namespace, name)))) jobs.push(objectKey(raw))
      }
      return Effect.andThen(enqueueAll(ctx, jobs), ctx.queues.pullSecrets.add(allSecretCopies))
    })
})
