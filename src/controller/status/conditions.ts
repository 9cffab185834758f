import type { Condition } from "../../api/meta.ts"

/**
 * Sets one condition, keeping lastTransitionTime when its status did not change (the convention
 * of metav1.Condition that `kubectl wait --for=condition=` and dashboards rely on).
 */
export const setCondition = (
  conditions: ReadonlyArray<Condition> | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: string
): ReadonlyArray<Condition> => {
  const current = (conditions ?? []).find((c) => c.type === next.type)
  const lastTransitionTime = current !== undefined && current.status === next.status
    ? current.lastTransitionTime ?? now
    : now
  const updated: Condition = { ...next, lastTransitionTime }
  return current === undefined
    ? [...(conditions ?? []), updated]
    : (conditions ?? []).map((c) => (c.type === next.type ? updated : c))
}
