// Workload conditions with kube's timestamps: lastTransitionTime moves only when the status
// flips, lastUpdateTime when anything about the condition changes; an unchanged condition keeps
// both, so an unchanged status writes nothing.
import { isPlainObject } from "../../../src/json/plainObject.ts"

export interface ConditionInput {
  readonly type: string
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
}

export const withTimes = (previous: unknown, next: ReadonlyArray<ConditionInput>, now: string) => {
  const old = Array.isArray(previous) ? previous.filter(isPlainObject) : []
  return next.map((c) => {
    const before = old.find((o) => o["type"] === c.type)
    const same = before !== undefined && before["status"] === c.status && before["reason"] === c.reason && before["message"] === c.message
    const transition = before !== undefined && before["status"] === c.status ? before["lastTransitionTime"] : now
    return { ...c, lastUpdateTime: same ? before["lastUpdateTime"] : now, lastTransitionTime: transition ?? now }
  })
}
