// DaemonSet → one Pod per matching node, created with spec.nodeName set (the real controller
// pins the node through node affinity and lets the scheduler bind; the effect is the same),
// labelled controller-revision-hash=<hash> (the DaemonSet convention: the hash alone; the
// ControllerRevision is <daemonset>-<hash>) and pod-template-generation; placement and updates
// as daemonSetPlan.ts decides.
import { Effect } from "effect"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import type { WorkloadContext } from "./context.ts"
import { type DaemonPod, planDaemonSet } from "./daemonSetPlan.ts"
import {
  controllerRef,
  controllerRevisionHashLabel,
  field,
  isNodeReady,
  isPodReady,
  isTerminating,
  labelsOf,
  ownedBy,
  podFromTemplate,
  podTemplateGenerationLabel,
  scaled,
  spec,
  status,
  stringAt,
  template
} from "./objects.ts"
import { ensureRevision, pruneRevisions } from "./revisions.ts"
import { untoleratedTaint } from "./taints.ts"
import { templateHash } from "./templateHash.ts"
import { createIn, deleteIn, event, patchIn, statusChanges } from "./writes.ts"

const report = event("daemonset-controller")

/** The tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util), after the template's. */
const daemonTolerations = (own: unknown): ReadonlyArray<unknown> => [
  ...(Array.isArray(own) ? own : []),
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }
]

export const reconcileDaemonSet =
  (ctx: WorkloadContext) =>
  (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const set = ctx.stores.daemonSets.get(key)
      if (set === undefined || isTerminating(set)) return {}
      const name = set.metadata.name ?? ""
      const namespace = set.metadata.namespace ?? "default"
      const podTemplate = template(set)
      const hash = templateHash(podTemplate)
      const revisions = yield* ensureRevision(ctx, set, resources.daemonSet, podTemplate, hash)
      const nodeSelector = field(field(podTemplate, "spec"), "nodeSelector")
      const pods = () => ownedBy(set, ctx.stores.pods.values()).filter((p) => stringAt(spec(p), "nodeName") !== undefined)
      const tolerations = daemonTolerations(field(podTemplate, "spec")["tolerations"])
      const running = new Set(pods().map((pod) => stringAt(spec(pod), "nodeName")))
      const nodes = [...ctx.stores.nodes.values()].map((node) => ({
        name: node.metadata.name ?? "",
        ready: isNodeReady(node),
        // A NoSchedule taint keeps new daemon pods off (the warm gate's, say); one already running stays.
        matches:
          Object.entries(nodeSelector).every(([k, v]) => labelsOf(node)[k] === v) &&
          (running.has(node.metadata.name) || untoleratedTaint(node, tolerations) === undefined)
      }))
      const views = (): Array<DaemonPod> =>
        pods().map((pod) => ({
          name: pod.metadata.name ?? "",
          nodeName: stringAt(spec(pod), "nodeName") ?? "",
          updated: labelsOf(pod)[controllerRevisionHashLabel] === hash,
          ready: isPodReady(pod),
          terminating: isTerminating(pod),
          created: pod.metadata.creationTimestamp ?? ""
        }))
      const strategy = field(spec(set), "updateStrategy")
      const desired = planDaemonSet({ nodes, pods: views(), maxUnavailable: undefined }).desired.length
      // maxSurge is not simulated: old pods go first, then their successors start.
      const maxUnavailable =
        strategy["type"] === "OnDelete"
          ? undefined
          : Math.max(1, scaled(field(strategy, "rollingUpdate")["maxUnavailable"] ?? 1, desired, true))
      const plan = planDaemonSet({ nodes, pods: views(), maxUnavailable })

      for (const nodeName of plan.create) {
        const pod = yield* createIn(
          ctx.stores.pods,
          podFromTemplate(podTemplate, {
            namespace,
            generateName: `${name}-`,
            labels: { [controllerRevisionHashLabel]: hash, [podTemplateGenerationLabel]: String(set.metadata.generation ?? 1) },
            ownerReference: controllerRef(set, resources.daemonSet),
            spec: { nodeName }
          })
        )
        yield* report(set, "Normal", "SuccessfulCreate", `Created pod: ${pod.metadata.name}`)
      }
      for (const podName of new Set(plan.delete)) {
        const pod = ctx.stores.pods.get(`${namespace}/${podName}`)
        if (pod === undefined) continue
        yield* deleteIn(ctx.stores.pods, pod)
        yield* report(set, "Normal", "SuccessfulDelete", `Deleted pod: ${podName}`)
      }

      const after = views()
      const onDesired = (pod: DaemonPod) => !pod.terminating && plan.desired.includes(pod.nodeName)
      const nodesWith = (test: (pod: DaemonPod) => boolean) =>
        new Set(after.filter((p) => onDesired(p) && test(p)).map((p) => p.nodeName)).size
      const available = nodesWith((p) => p.ready)
      const next = {
        observedGeneration: set.metadata.generation ?? 0,
        desiredNumberScheduled: plan.desired.length,
        currentNumberScheduled: nodesWith(() => true),
        numberMisscheduled: new Set(after.filter((p) => !p.terminating && !plan.desired.includes(p.nodeName)).map((p) => p.nodeName)).size,
        numberReady: available,
        updatedNumberScheduled: nodesWith((p) => p.updated),
        numberAvailable: available,
        numberUnavailable: plan.desired.length - available
      }
      if (statusChanges(status(set), next)) yield* patchIn(ctx.stores.daemonSets, set, { status: next }, "status")
      const inUse = new Set([`${name}-${hash}`, ...pods().map((p: KubeObject) => `${name}-${labelsOf(p)[controllerRevisionHashLabel]}`)])
      yield* pruneRevisions(ctx, set, revisions.all, inUse)
      return {}
    })
