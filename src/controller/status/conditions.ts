import { escapeForeignText } from "../../api/goQuote.ts"
import type { Condition } from "../../api/meta.ts"

/** metav1.Condition's message maxLength: the API server refuses a longer one. */
export const maxConditionMessageLength = 32768

/**
 * Sets one condition, keeping lastTransitionTime when its status did not change (the convention
 * of metav1.Condition that `kubectl wait --for=condition=` and dashboards rely on). Its message,
 * which may repeat what users wrote, is escaped and bounded here once more (goQuote.ts), whoever
 * built it.
 */
export const setCondition = (
  conditions: ReadonlyArray<Condition> | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: string
): ReadonlyArray<Condition> => {
  const current = (conditions ?? []).find((c) => c.type === next.type)
  const lastTransitionTime = current !== undefined && current.status === next.status ? (current.lastTransitionTime ?? now) : now
  const updated: Condition = {
    ...next,
    ...(next.message === undefined ? {} : { message: escapeForeignText(next.message, maxConditionMessageLength - 3) }),
    lastTransitionTime
  }
  return current === undefined ? [...(conditions ?? []), updated] : (conditions ?? []).map((c) => (c.type === next.type ? updated : c))
}

/**
 * The status brought up to the object's generation. A finished job edited afterwards keeps its
 * result, but says it has seen the edit, so `kubectl wait --for=condition=Complete` (which waits
 * for status.observedGeneration to reach metadata.generation) still returns.
 */
export const observed = <S extends { readonly observedGeneration?: number }>(status: S, generation: number | undefined): S =>
  generation === undefined || status.observedGeneration === generation ? status : { ...status, observedGeneration: generation }
