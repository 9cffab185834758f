import type { Parallelism } from "./jobTemplate.ts"
import { maxInt32 } from "./schemaExtras.ts"

const percentage = /^([0-9]|[1-9][0-9]|100)%$/
// A number written as a string (Helm's `quote`): upstream's int-or-string reads it as that number.
const numeric = /^[0-9]{1,9}$/

/** An int32 as upstream's int-or-string holds it (the CRD rule has the same bound). */
export const isValidParallelism = (p: Parallelism): boolean =>
  typeof p === "number" ? Number.isInteger(p) && p >= 0 && p <= maxInt32 : percentage.test(p) || numeric.test(p)

/**
 * Nodes that may pull at once. A percentage is of the desired nodes, rounded up as
 * Kubernetes does for maxSurge, so "1%" of 3 nodes is 1 and never silently 0 (SPEC §4.4);
 * only an explicit 0 or 0% pauses. An invalid value resolves to 0: the job is not acted on.
 */
export const resolveParallelism = (p: Parallelism, desiredNodes: number): number => {
  if (!isValidParallelism(p)) return 0
  if (typeof p === "number") return p
  if (numeric.test(p)) return Number.parseInt(p, 10)
  return Math.ceil((Number.parseInt(p, 10) * desiredNodes) / 100)
}
