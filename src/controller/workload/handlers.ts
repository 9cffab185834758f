import { Effect } from "effect"
import type { Change } from "../../kube/informer.ts"
import type { ControllerContext } from "../context.ts"
import { workloadChangeKeys, workloadKeysFor } from "./keys.ts"
import type { OwnedResource, WorkloadLookup } from "./keys.ts"
import type { WorkloadKind } from "./rollout.ts"
import { workloadStore } from "./reconcile.ts"

const lookup = (ctx: ControllerContext): WorkloadLookup => ({
  replicaSet: (key) => ctx.replicaSets.get(key),
  workload: (kind, key) => workloadStore(ctx, kind).get(key)
})

/** The pre-download reconciler's share of the change handlers: a workload, or what it owns, changed. */
export const workloadHandlers = (context: () => ControllerContext) => ({
  workload: (kind: WorkloadKind) => (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      return Effect.forEach(workloadChangeKeys(kind, change), (key) => ctx.queues.workload.add(key), { discard: true })
    }),

  owned: (resource: OwnedResource) => (change: Change) =>
    Effect.suspend(() => {
      const ctx = context()
      return Effect.forEach(workloadKeysFor(resource, change, lookup(ctx)), (key) => ctx.queues.workload.add(key), { discard: true })
    })
})
