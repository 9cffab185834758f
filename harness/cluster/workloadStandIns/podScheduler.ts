// The dev cluster's scheduler: binds each pod without spec.nodeName to the node nodeChoice.ts
// picks, with kube-scheduler's PodScheduled condition and its Scheduled / FailedScheduling events.
import { Clock, Effect } from "effect"
import { rfc3339 } from "../../../src/api/time.ts"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import type { WorkloadContext } from "./context.ts"
import { chooseNode } from "./nodeChoice.ts"
import { field, isTerminating, spec, status, stringAt } from "./objects.ts"
import { event, patchIn } from "./writes.ts"

const report = event("default-scheduler")

/** Pods that wait for this scheduler: no node yet, not being deleted, not meant for another scheduler. */
export const awaitsScheduling = (pod: KubeObject): boolean =>
  stringAt(spec(pod), "nodeName") === undefined &&
  !isTerminating(pod) &&
  (stringAt(spec(pod), "schedulerName") ?? "default-scheduler") === "default-scheduler"

const podsPerNode = (pods: Iterable<KubeObject>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const pod of pods) {
    const node = stringAt(spec(pod), "nodeName")
    const phase = stringAt(status(pod), "phase")
    const occupies = node !== undefined && !isTerminating(pod) && phase !== "Succeeded" && phase !== "Failed"
    if (occupies) counts.set(node, (counts.get(node) ?? 0) + 1)
  }
  return counts
}

const scheduledCondition = (pod: KubeObject) => {
  const conditions = status(pod)["conditions"]
  return Array.isArray(conditions) ? conditions.find((c) => isPlainObject(c) && c["type"] === "PodScheduled") : undefined
}

export const reconcileScheduling =
  (ctx: WorkloadContext) =>
  (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const pod = ctx.stores.pods.get(key)
      if (pod === undefined || !awaitsScheduling(pod)) return {}
      const counts = podsPerNode(ctx.stores.pods.values())
      const nodeSelector = field(spec(pod), "nodeSelector") as Record<string, string>
      const choice = chooseNode(nodeSelector, spec(pod)["tolerations"], [...ctx.stores.nodes.values()], (node) => counts.get(node) ?? 0)
      const now = rfc3339(yield* Clock.currentTimeMillis)
      const podName = `${pod.metadata.namespace}/${pod.metadata.name}`
      if (choice._tag === "Unschedulable") {
        // Tried again when a node changes; the same verdict is not reported twice.
        const before = scheduledCondition(pod)
        if (isPlainObject(before) && before["message"] === choice.message) return {}
        const condition = {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: choice.message,
          lastTransitionTime: now
        }
        yield* patchIn(ctx.stores.pods, pod, { status: { phase: "Pending", conditions: [condition] } }, "status")
        yield* report(pod, "Warning", "FailedScheduling", choice.message)
        return {}
      }
      // The binding: a real scheduler posts pods/binding, which sets spec.nodeName and the
      // PodScheduled condition in one write. Here they are two, the condition first: written after
      // the node, it could land after the kubelet's Running status (it starts on the node's write)
      // and set the phase back to Pending, and the kubelet would start the pod a second time.
      const condition = { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: now }
      const scheduled = yield* patchIn(ctx.stores.pods, pod, { status: { phase: "Pending", conditions: [condition] } }, "status")
      yield* patchIn(ctx.stores.pods, scheduled, { spec: { nodeName: choice.name } })
      yield* report(pod, "Normal", "Scheduled", `Successfully assigned ${podName} to ${choice.name}`)
      return {}
    })
