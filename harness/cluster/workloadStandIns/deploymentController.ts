// Deployment → ReplicaSets: one per distinct pod template, named <deployment>-<pod-template-hash>,
// labelled (and selecting) pod-template-hash, annotated with the rollout's revision; scaled by
// the rolling update's arithmetic (rollingUpdate.ts); status and the Available and Progressing
// conditions as `kubectl rollout status` reads them.
import { Clock, Effect } from "effect"
import { rfc3339 } from "../../../src/api/time.ts"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import { withTimes } from "./conditions.ts"
import type { WorkloadContext } from "./context.ts"
import {
  controllerRef,
  field,
  isTerminating,
  type Json,
  labelsOf,
  numberAt,
  ownedBy,
  podTemplateHashLabel,
  revisionAnnotation,
  scaled,
  spec,
  status,
  template
} from "./objects.ts"
import { planRollout, resolveRollingLimits, type ReplicaSetView, type RolloutInput } from "./rollingUpdate.ts"
import { templateHash } from "./templateHash.ts"
import { createIn, deleteIn, event, patchIn, statusChanges } from "./writes.ts"

const report = event("deployment-controller")

const scaling = (deployment: KubeObject, rs: KubeObject, from: number, to: number) => {
  const message = `Scaled ${to > from ? "up" : "down"} replica set ${rs.metadata.name} from ${from} to ${to}`
  return report(deployment, "Normal", "ScalingReplicaSet", message)
}

const revisionOf = (rs: KubeObject): number => Number(rs.metadata.annotations?.[revisionAnnotation] ?? "0") || 0

const view = (rs: KubeObject): ReplicaSetView => ({
  name: rs.metadata.name ?? "",
  replicas: numberAt(spec(rs), "replicas"),
  available: numberAt(status(rs), "availableReplicas"),
  pods: numberAt(status(rs), "replicas")
})

/** The strategy with maxSurge and maxUnavailable resolved against the desired replicas. */
const strategyOf = (deployment: KubeObject, desired: number): RolloutInput["strategy"] => {
  const strategy = field(spec(deployment), "strategy")
  if (strategy["type"] === "Recreate") return { type: "Recreate" }
  const rolling = field(strategy, "rollingUpdate")
  const limits = resolveRollingLimits(
    desired,
    scaled(rolling["maxSurge"] ?? "25%", desired, true),
    scaled(rolling["maxUnavailable"] ?? "25%", desired, false)
  )
  return { type: "RollingUpdate", ...limits }
}

/** The ReplicaSet for the deployment's current template (pod-template-hash added to template and selector). */
const replicaSetFor = (deployment: KubeObject, hash: string, replicas: number, revision: number): KubeObject => {
  const podTemplate = template(deployment)
  const meta = field(podTemplate, "metadata")
  const labels = { ...(field(meta, "labels") as Record<string, string>), [podTemplateHashLabel]: hash }
  const selector = field(spec(deployment), "selector")
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${deployment.metadata.name}-${hash}`,
      namespace: deployment.metadata.namespace ?? "default",
      labels,
      annotations: { [revisionAnnotation]: String(revision) },
      ownerReferences: [controllerRef(deployment, resources.deployment)]
    },
    spec: {
      replicas,
      selector: { ...selector, matchLabels: { ...field(selector, "matchLabels"), [podTemplateHashLabel]: hash } },
      template: { ...podTemplate, metadata: { ...meta, labels } }
    }
  }
}

/** status of a Deployment from its ReplicaSets, with kube's condition reasons. */
const deploymentStatus = (
  deployment: KubeObject,
  newReplicaSet: KubeObject | undefined,
  all: ReadonlyArray<KubeObject>,
  now: string
): Json => {
  const desired = numberAt(spec(deployment), "replicas", 1)
  const sum = (pick: (rs: KubeObject) => number) => all.reduce((n, rs) => n + pick(rs), 0)
  const replicas = sum((rs) => numberAt(status(rs), "replicas"))
  const updated = newReplicaSet === undefined ? 0 : numberAt(status(newReplicaSet), "replicas")
  const available = sum((rs) => numberAt(status(rs), "availableReplicas"))
  const strategy = strategyOf(deployment, desired)
  const minAvailable = desired - (strategy.type === "Recreate" ? 0 : strategy.maxUnavailable)
  const complete = updated === desired && replicas === updated && available >= updated
  const rsName = newReplicaSet?.metadata.name ?? ""
  return {
    observedGeneration: deployment.metadata.generation ?? 0,
    replicas,
    updatedReplicas: updated,
    readyReplicas: sum((rs) => numberAt(status(rs), "readyReplicas")),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, sum((rs) => numberAt(spec(rs), "replicas")) - available),
    conditions: withTimes(
      status(deployment)["conditions"],
      [
        available >= minAvailable
          ? { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." }
          : {
              type: "Available",
              status: "False",
              reason: "MinimumReplicasUnavailable",
              message: "Deployment does not have minimum availability."
            },
        complete
          ? {
              type: "Progressing",
              status: "True",
              reason: "NewReplicaSetAvailable",
              message: `ReplicaSet "${rsName}" has successfully progressed.`
            }
          : { type: "Progressing", status: "True", reason: "ReplicaSetUpdated", message: `ReplicaSet "${rsName}" is progressing.` }
      ],
      now
    )
  }
}

export const reconcileDeployment =
  (ctx: WorkloadContext) =>
  (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const deployment = ctx.stores.deployments.get(key)
      if (deployment === undefined || isTerminating(deployment)) return {}
      const store = ctx.stores.replicaSets
      const hash = templateHash(template(deployment))
      const desired = numberAt(spec(deployment), "replicas", 1)
      const owned = () => ownedBy(deployment, store.values()).filter((rs) => !isTerminating(rs))
      let current = owned().find((rs) => labelsOf(rs)[podTemplateHashLabel] === hash)
      const olds = owned()
        .filter((rs) => rs !== current)
        .sort((a, b) => revisionOf(a) - revisionOf(b))
      const newest = olds.reduce((n, rs) => Math.max(n, revisionOf(rs)), 0)

      // A paused Deployment does not roll out (kubectl rollout pause); its status is still kept.
      if (spec(deployment)["paused"] !== true) {
        const strategy = strategyOf(deployment, desired)
        const plan = planRollout({
          desired,
          strategy,
          newReplicaSet:
            current === undefined ? { name: `${deployment.metadata.name}-${hash}`, replicas: 0, available: 0, pods: 0 } : view(current),
          oldReplicaSets: olds.map(view)
        })
        if (current === undefined) {
          const replicas = plan.get(`${deployment.metadata.name}-${hash}`) ?? 0
          current = yield* createIn(store, replicaSetFor(deployment, hash, replicas, newest + 1))
          if (replicas > 0) yield* scaling(deployment, current, 0, replicas)
        } else if (revisionOf(current) <= newest) {
          // The template came back: its old ReplicaSet is the newest revision again.
          current = yield* patchIn(store, current, { metadata: { annotations: { [revisionAnnotation]: String(newest + 1) } } })
        }
        for (const rs of [current, ...olds]) {
          const replicas = plan.get(rs.metadata.name ?? "")
          const before = numberAt(spec(rs), "replicas")
          if (replicas === undefined || replicas === before) continue
          yield* patchIn(store, rs, { spec: { replicas } })
          yield* scaling(deployment, rs, before, replicas)
        }
        // Old ReplicaSets beyond revisionHistoryLimit go once they have no pods left.
        const limit = numberAt(spec(deployment), "revisionHistoryLimit", 10)
        const empty = olds
          .map((rs) => store.get(`${rs.metadata.namespace}/${rs.metadata.name}`) ?? rs)
          .filter((rs) => numberAt(spec(rs), "replicas") === 0 && numberAt(status(rs), "replicas") === 0)
        for (const rs of empty.slice(0, Math.max(0, empty.length - limit))) yield* deleteIn(store, rs)
      }

      const revision = current === undefined ? undefined : current.metadata.annotations?.[revisionAnnotation]
      if (revision !== undefined && deployment.metadata.annotations?.[revisionAnnotation] !== revision) {
        yield* patchIn(ctx.stores.deployments, deployment, { metadata: { annotations: { [revisionAnnotation]: revision } } })
      }
      const latest = ctx.stores.deployments.get(key) ?? deployment
      const next = deploymentStatus(latest, current, owned(), rfc3339(yield* Clock.currentTimeMillis))
      if (statusChanges(status(latest), next)) yield* patchIn(ctx.stores.deployments, latest, { status: next }, "status")
      return {}
    })
