// ReplicaSet → Pods: spec.replicas live pods named <rs>-<5 random characters>, made from the
// template and owned by the ReplicaSet; surplus pods removed cheapest first; status counted from them.
import { Effect } from "effect"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import type { WorkloadContext } from "./context.ts"
import { controllerRef, field, isPodReady, isTerminating, numberAt, ownedBy, podFromTemplate, spec, status, stringAt } from "./objects.ts"
import { podsToDelete } from "./podChoice.ts"
import { createIn, deleteIn, event, patchIn, statusChanges } from "./writes.ts"

const report = event("replicaset-controller")

const isFinished = (pod: KubeObject) => ["Succeeded", "Failed"].includes(stringAt(status(pod), "phase") ?? "")

/** Pods that count towards replicas: not finished, not being deleted. */
const activePods = (owner: KubeObject, pods: Iterable<KubeObject>) =>
  ownedBy(owner, pods).filter((p) => !isTerminating(p) && !isFinished(p))

export const reconcileReplicaSet =
  (ctx: WorkloadContext) =>
  (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const rs = ctx.stores.replicaSets.get(key)
      if (rs === undefined || isTerminating(rs)) return {}
      const name = rs.metadata.name ?? ""
      const namespace = rs.metadata.namespace ?? "default"
      const active = activePods(rs, ctx.stores.pods.values())
      const missing = numberAt(spec(rs), "replicas", 1) - active.length
      for (let i = 0; i < missing; i++) {
        const pod = yield* createIn(
          ctx.stores.pods,
          podFromTemplate(field(spec(rs), "template"), {
            namespace,
            generateName: `${name}-`,
            labels: {},
            ownerReference: controllerRef(rs, resources.replicaSet)
          })
        )
        yield* report(rs, "Normal", "SuccessfulCreate", `Created pod: ${pod.metadata.name}`)
      }
      if (missing < 0) {
        const surplus = new Set(
          podsToDelete(
            active.map((p) => ({
              name: p.metadata.name ?? "",
              nodeName: stringAt(spec(p), "nodeName"),
              running: stringAt(status(p), "phase") === "Running",
              ready: isPodReady(p),
              created: p.metadata.creationTimestamp ?? ""
            })),
            -missing
          )
        )
        for (const pod of active.filter((p) => surplus.has(p.metadata.name ?? ""))) {
          yield* deleteIn(ctx.stores.pods, pod)
          yield* report(rs, "Normal", "SuccessfulDelete", `Deleted pod: ${pod.metadata.name}`)
        }
      }
      const now = activePods(rs, ctx.stores.pods.values())
      // Pods are available as soon as they are Ready: minReadySeconds is not simulated.
      const ready = now.filter(isPodReady).length
      const next = {
        replicas: now.length,
        fullyLabeledReplicas: now.length,
        readyReplicas: ready,
        availableReplicas: ready,
        observedGeneration: rs.metadata.generation ?? 0
      }
      if (statusChanges(status(rs), next)) yield* patchIn(ctx.stores.replicaSets, rs, { status: next }, "status")
      return {}
    })
