// The ImagePullJobs of one rollout: one per new image, on the nodes of the workload's pods.
import { Duration } from "effect"
import type { Parallelism } from "../api/jobTemplate.ts"
import { maxNodeNames } from "../api/jobTemplate.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import type { NewImage } from "./imageChanges.ts"
import type { WorkloadTemplate } from "./podTemplate.ts"
import type { WorkloadRef } from "./workloadArgument.ts"
import { displayName } from "./workloadArgument.ts"

/** Every job of one run carries it, with the run's id: the view, Ctrl-C and `kubectl get ipj -l` find them by it. */
export const rolloutLabel = "preheat.kruise.io/rollout"
/** The workload the jobs pre-pull for, as kubectl names it (`deployment.apps/web`). */
const workloadAnnotation = "preheat.kruise.io/rollout-workload"

/**
 * Finished jobs stay this long (the controller deletes them after): long enough to read why a
 * rollout stopped, short enough that they do not pile up. Upstream's workload jobs keep 600 s.
 */
export const jobTtlSeconds = 3600
/** Upstream's pull policy for the jobs it creates for workloads: one retry, 300 s a pull. */
const pullTimeoutSeconds = 300
const backoffLimit = 1

/** Kubernetes keeps 58 characters of a generateName (63 less its 5 random ones). */
const maxPrefix = 58

export interface RolloutJobsInput {
  readonly workload: WorkloadRef
  readonly namespace: string
  readonly template: WorkloadTemplate
  readonly images: ReadonlyArray<NewImage>
  /** Nodes of the workload's current pods, sorted. */
  readonly nodes: ReadonlyArray<string>
  readonly rolloutId: string
  readonly parallelism: Parallelism
  /** --timeout: the jobs give up then too (activeDeadlineSeconds), so nothing keeps pulling for nobody. */
  readonly timeout: Duration.Duration | undefined
}

/** Nodes of active pods (on a node, not finished, not being deleted), as a podSelector job counts them. */
export const podNodes = (pods: ReadonlyArray<KubeObject>): ReadonlyArray<string> => {
  const nodes = new Set<string>()
  for (const pod of pods) {
    const spec = pod["spec"] as { readonly nodeName?: unknown } | undefined
    const status = pod["status"] as { readonly phase?: unknown } | undefined
    const node = spec?.nodeName
    const finished = status?.phase === "Succeeded" || status?.phase === "Failed"
    if (typeof node === "string" && node !== "" && !finished && pod.metadata.deletionTimestamp === undefined) nodes.add(node)
  }
  return [...nodes].sort()
}

const prefixOf = (workload: string, containers: ReadonlyArray<string>): string => {
  const prefix = `${workload}-${containers[0] ?? "image"}`.slice(0, maxPrefix - 1).replace(/[.-]+$/, "")
  return `${prefix}-`
}

/**
 * One ImagePullJob per new image. Nodes by name (the pods' nodes now, which the view can show
 * in full), or by the workload's selector as a podSelector where there are more nodes than a
 * job may name. Owned by the workload but not its controller: deleting the workload deletes
 * them, and a workload controller that manages its own pre-pull jobs leaves them alone.
 */
export const rolloutJobs = (input: RolloutJobsInput): ReadonlyArray<KubeObject> => {
  const deadline = input.timeout === undefined ? undefined : Math.max(1, Math.ceil(Duration.toSeconds(input.timeout)))
  const target = input.nodes.length <= maxNodeNames ? { selector: { names: [...input.nodes] } } : { podSelector: input.template.selector }
  return input.images.map((image) => ({
    apiVersion: resources.imagePullJob.apiVersion,
    kind: resources.imagePullJob.kind,
    metadata: {
      namespace: input.namespace,
      generateName: prefixOf(input.workload.name, image.containers),
      labels: { [rolloutLabel]: input.rolloutId, "app.kubernetes.io/managed-by": "preheat" },
      annotations: { [workloadAnnotation]: displayName(input.workload) },
      ownerReferences: [
        {
          apiVersion: input.workload.kind.resource.apiVersion,
          kind: input.workload.kind.resource.kind,
          name: input.workload.name,
          uid: input.template.uid
        }
      ]
    },
    spec: {
      image: image.image,
      parallelism: input.parallelism,
      ...target,
      completionPolicy: {
        type: "Always",
        ttlSecondsAfterFinished: jobTtlSeconds,
        ...(deadline === undefined ? {} : { activeDeadlineSeconds: deadline })
      },
      // A pull may not outlast the deadline (the API server refuses a timeout above it).
      pullPolicy: { backoffLimit, timeoutSeconds: Math.min(pullTimeoutSeconds, deadline ?? pullTimeoutSeconds) },
      ...(input.template.pullSecrets.length === 0 ? {} : { pullSecrets: [...input.template.pullSecrets] }),
      imagePullPolicy: "IfNotPresent"
    }
  }))
}
