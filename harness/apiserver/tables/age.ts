import { humanDuration } from "../../../src/api/humanDuration.ts"

/** A timestamp's age for a table cell: `<unknown>` without one, as kube-apiserver prints. */
export const ageOf = (timestamp: unknown, now: number): string => {
  if (typeof timestamp !== "string" || timestamp === "") return "<unknown>"
  const millis = Date.parse(timestamp)
  return Number.isNaN(millis) ? "<invalid>" : humanDuration(now - millis)
}
