// Taints and tolerations as kube-scheduler's TaintToleration filter and the DaemonSet controller
// read them (k8s.io/api core/v1 Toleration.ToleratesTaint): NoSchedule and NoExecute taints keep
// off every pod that does not tolerate them; PreferNoSchedule is only a preference and is ignored.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Json } from "./objects.ts"
import { stringAt } from "./objects.ts"

interface Taint {
  readonly key: string
  readonly value: string
  readonly effect: string
}

const taintsOf = (node: KubeObject): Array<Taint> => {
  const spec = isPlainObject(node["spec"]) ? node["spec"] : {}
  const taints = Array.isArray(spec["taints"]) ? spec["taints"] : []
  return taints.filter(isPlainObject).map((t) => ({
    key: stringAt(t, "key") ?? "",
    value: stringAt(t, "value") ?? "",
    effect: stringAt(t, "effect") ?? ""
  }))
}

const tolerates = (toleration: Json, taint: Taint): boolean => {
  const effect = stringAt(toleration, "effect") ?? ""
  if (effect !== "" && effect !== taint.effect) return false
  const key = stringAt(toleration, "key") ?? ""
  // An empty key with Exists tolerates every taint.
  if (key !== "" && key !== taint.key) return false
  switch (stringAt(toleration, "operator") ?? "Equal") {
    case "Exists":
      return true
    case "Equal":
      return key !== "" && (stringAt(toleration, "value") ?? "") === taint.value
    default:
      return false
  }
}

/**
 * The first taint of the node that keeps off a pod with these tolerations (kube-scheduler's
 * wording of it: `{key: value}`), or undefined when the pod may go there.
 */
export const untoleratedTaint = (node: KubeObject, tolerations: unknown): string | undefined => {
  const list = Array.isArray(tolerations) ? tolerations.filter(isPlainObject) : []
  const taint = taintsOf(node).find(
    (t) => (t.effect === "NoSchedule" || t.effect === "NoExecute") && !list.some((toleration) => tolerates(toleration, t))
  )
  return taint === undefined ? undefined : `{${taint.key}: ${taint.value}}`
}
