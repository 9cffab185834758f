// What a rollout needs of a Deployment, StatefulSet or DaemonSet: its selector, and its pod
// template's containers, init containers and pull secrets.
import { Result } from "effect"
import type { LabelSelector } from "../api/labelSelector.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { WorkloadShapeError } from "./errors.ts"

export type ContainerList = "containers" | "initContainers"

export interface TemplateContainer {
  readonly list: ContainerList
  readonly name: string
  readonly image: string
}

export interface WorkloadTemplate {
  readonly uid: string
  readonly selector: LabelSelector
  /** Containers, then init containers, each in template order. */
  readonly containers: ReadonlyArray<TemplateContainer>
  /** Names of spec.template.spec.imagePullSecrets. */
  readonly pullSecrets: ReadonlyArray<string>
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const field = (value: unknown, name: string): unknown => (isRecord(value) ? value[name] : undefined)

const containersOf = (podSpec: unknown, list: ContainerList): ReadonlyArray<TemplateContainer> => {
  const items = field(podSpec, list)
  if (!Array.isArray(items)) return []
  return items.flatMap((item) => {
    const name = field(item, "name")
    const image = field(item, "image")
    return typeof name === "string" ? [{ list, name, image: typeof image === "string" ? image : "" }] : []
  })
}

/** The template of a workload as the API server returned it (so apps/v1 validation has passed). */
export const readTemplate = (workload: KubeObject, display: string): Result.Result<WorkloadTemplate, WorkloadShapeError> => {
  const spec = workload["spec"]
  const selector = field(spec, "selector")
  const podSpec = field(field(spec, "template"), "spec")
  const containers = [...containersOf(podSpec, "containers"), ...containersOf(podSpec, "initContainers")]
  if (!isRecord(selector) || containers.length === 0) {
    return Result.fail(new WorkloadShapeError({ message: `${display} has no spec.selector or no containers in its pod template` }))
  }
  const secrets = field(podSpec, "imagePullSecrets")
  const pullSecrets = Array.isArray(secrets)
    ? secrets.flatMap((s) => {
        const name = field(s, "name")
        return typeof name === "string" && name !== "" ? [name] : []
      })
    : []
  return Result.succeed({ uid: workload.metadata.uid ?? "", selector: selector as LabelSelector, containers, pullSecrets })
}
