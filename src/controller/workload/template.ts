// The parts of a pod template and of apps/v1 objects that pre-download reads, as loose views of
// the JSON (the API server has validated them; anything missing reads as absent).
import type { KubeObject } from "../../kube/KubeApi.ts"

export interface Container {
  readonly name?: string
  readonly image?: string
}

export interface PodTemplate {
  readonly metadata?: { readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> }
  readonly spec?: {
    readonly containers?: ReadonlyArray<Container>
    readonly initContainers?: ReadonlyArray<Container>
    readonly imagePullSecrets?: ReadonlyArray<{ readonly name?: string }>
  }
}

export const specOf = (object: KubeObject): Record<string, unknown> => (object["spec"] ?? {}) as Record<string, unknown>
export const statusOf = (object: KubeObject): Record<string, unknown> => (object["status"] ?? {}) as Record<string, unknown>
export const templateOf = (object: KubeObject): PodTemplate => (specOf(object)["template"] ?? {}) as PodTemplate

/**
 * The template a ControllerRevision of a StatefulSet or DaemonSet holds: its data is the patch
 * `{"spec":{"template":{...,"$patch":"replace"}}}` that the apps controllers store.
 */
export const revisionTemplate = (revision: KubeObject): PodTemplate | undefined => {
  const data = revision["data"] as { spec?: { template?: PodTemplate } } | undefined
  return data?.spec?.template
}

/** Every image a template's containers and init containers run (both must be on the node before it starts). */
export const imagesOf = (template: PodTemplate): ReadonlyArray<Container> =>
  [...(template.spec?.initContainers ?? []), ...(template.spec?.containers ?? [])].filter((c) => (c.image ?? "") !== "")

/** The object the controller reference of `object` names (metav1.GetControllerOf). */
export const controllerOf = (object: KubeObject) => object.metadata.ownerReferences?.find((o) => o.controller === true)

/** Whether a pod counts as Ready (its Ready condition True) and is not on its way out. */
export const podReady = (pod: KubeObject): boolean =>
  pod.metadata.deletionTimestamp === undefined &&
  ((statusOf(pod)["conditions"] ?? []) as ReadonlyArray<{ type?: string; status?: string }>).some(
    (c) => c.type === "Ready" && c.status === "True"
  )

/** Whether a pod still runs somewhere (placed, not finished, not deleting). */
export const podActive = (pod: KubeObject): boolean => {
  const phase = statusOf(pod)["phase"]
  return pod.metadata.deletionTimestamp === undefined && phase !== "Succeeded" && phase !== "Failed"
}

/** JSON with sorted keys, for comparing templates whatever order their fields came in. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  )
