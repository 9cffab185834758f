// StatefulSet → Pods <sts>-<ordinal>, each labelled controller-revision-hash=<its revision's
// name> (the StatefulSet convention: the ControllerRevision's name, not only the hash), with
// status.currentRevision/updateRevision naming ControllerRevisions; order and updates as
// statefulSetPlan.ts decides.
import { Effect } from "effect"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import type { WorkloadContext } from "./context.ts"
import {
  controllerRef,
  controllerRevisionHashLabel,
  field,
  isPodReady,
  isTerminating,
  labelsOf,
  numberAt,
  ownedBy,
  podFromTemplate,
  podIndexLabel,
  spec,
  statefulSetPodNameLabel,
  status,
  stringAt,
  template
} from "./objects.ts"
import { ensureRevision, pruneRevisions, revisionTemplate } from "./revisions.ts"
import { type OrdinalPod, planStatefulSet } from "./statefulSetPlan.ts"
import { templateHash } from "./templateHash.ts"
import { createIn, deleteIn, event, patchIn, statusChanges } from "./writes.ts"

const report = event("statefulset-controller")

const ordinalOf = (setName: string, pod: KubeObject): number | undefined => {
  const name = pod.metadata.name ?? ""
  const rest = name.startsWith(`${setName}-`) ? name.slice(setName.length + 1) : ""
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined
}

export const reconcileStatefulSet =
  (ctx: WorkloadContext) =>
  (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const set = ctx.stores.statefulSets.get(key)
      if (set === undefined || isTerminating(set)) return {}
      const name = set.metadata.name ?? ""
      const namespace = set.metadata.namespace ?? "default"
      const podTemplate = template(set)
      const revisions = yield* ensureRevision(ctx, set, resources.statefulSet, podTemplate, templateHash(podTemplate))
      const updateRevision = revisions.update.metadata.name ?? ""
      const recorded = stringAt(status(set), "currentRevision")
      const current = revisions.all.find((r) => r.metadata.name === recorded) ?? revisions.update
      const currentRevision = current.metadata.name ?? ""
      const replicas = numberAt(spec(set), "replicas", 1)
      const strategy = field(spec(set), "updateStrategy")
      const rolling = strategy["type"] !== "OnDelete"

      const pods = () =>
        ownedBy(set, ctx.stores.pods.values()).flatMap((pod) => {
          const ordinal = ordinalOf(name, pod)
          return ordinal === undefined ? [] : [{ pod, ordinal }]
        })
      const views: Array<OrdinalPod> = pods().map(({ ordinal, pod }) => ({
        ordinal,
        name: pod.metadata.name ?? "",
        revision: labelsOf(pod)[controllerRevisionHashLabel],
        ready: isPodReady(pod),
        terminating: isTerminating(pod)
      }))
      const plan = planStatefulSet({
        replicas,
        pods: views,
        currentRevision,
        updateRevision,
        parallel: spec(set)["podManagementPolicy"] === "Parallel",
        partition: rolling ? numberAt(field(strategy, "rollingUpdate"), "partition") : undefined
      })
      for (const { ordinal, revision } of plan.create) {
        const podName = `${name}-${ordinal}`
        const fromTemplate = (revision === currentRevision ? revisionTemplate(current) : undefined) ?? podTemplate
        const serviceName = stringAt(spec(set), "serviceName")
        yield* createIn(
          ctx.stores.pods,
          podFromTemplate(fromTemplate, {
            namespace,
            name: podName,
            labels: { [controllerRevisionHashLabel]: revision, [statefulSetPodNameLabel]: podName, [podIndexLabel]: String(ordinal) },
            ownerReference: controllerRef(set, resources.statefulSet),
            spec: { hostname: podName, ...(serviceName === undefined || serviceName === "" ? {} : { subdomain: serviceName }) }
          })
        ).pipe(Effect.catchTag("AlreadyExists", () => Effect.void))
        yield* report(set, "Normal", "SuccessfulCreate", `create Pod ${podName} in StatefulSet ${name} successful`)
      }
      for (const podName of plan.delete) {
        const pod = ctx.stores.pods.get(`${namespace}/${podName}`)
        if (pod === undefined) continue
        yield* deleteIn(ctx.stores.pods, pod)
        yield* report(set, "Normal", "SuccessfulDelete", `delete Pod ${podName} in StatefulSet ${name} successful`)
      }

      const now = pods()
        .map(({ pod }) => pod)
        .filter((p) => !isTerminating(p))
      const ready = now.filter(isPodReady).length
      const updated = now.filter((p) => labelsOf(p)[controllerRevisionHashLabel] === updateRevision).length
      // The rollout is complete once every pod runs the update revision and is Ready.
      const done = rolling && updated === now.length && ready === now.length
      const next = {
        observedGeneration: set.metadata.generation ?? 0,
        replicas: now.length,
        readyReplicas: ready,
        availableReplicas: ready,
        currentReplicas: done ? updated : now.filter((p) => labelsOf(p)[controllerRevisionHashLabel] === currentRevision).length,
        updatedReplicas: updated,
        currentRevision: done ? updateRevision : currentRevision,
        updateRevision,
        collisionCount: 0
      }
      if (statusChanges(status(set), next)) yield* patchIn(ctx.stores.statefulSets, set, { status: next }, "status")
      const inUse = new Set([next.currentRevision, updateRevision, ...now.map((p) => labelsOf(p)[controllerRevisionHashLabel] ?? "")])
      yield* pruneRevisions(ctx, set, revisions.all, inUse)
      return {}
    })
