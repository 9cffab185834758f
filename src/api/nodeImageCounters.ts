import type { NodeImageSpec, NodeImageStatus } from "./nodeImage.ts"

type Counters = Pick<NodeImageStatus, "desired" | "pulling" | "waiting" | "succeeded" | "failed">

/**
 * The NodeImage's status counters, from its spec and per-tag statuses: a tag counts by the phase
 * reported for its current version, and as pulling while none is reported (the printer columns
 * then never show more finished tags than exist).
 */
export const statusCounters = (spec: NodeImageSpec, imageStatuses: NodeImageStatus["imageStatuses"]): Counters => {
  const counters = { desired: 0, pulling: 0, waiting: 0, succeeded: 0, failed: 0 }
  for (const [name, image] of Object.entries(spec.images ?? {})) {
    for (const tag of image.tags) {
      counters.desired++
      const status = imageStatuses?.[name]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === tag.version)
      switch (status?.phase) {
        case "Succeeded":
          counters.succeeded++
          break
        case "Failed":
          counters.failed++
          break
        case "Waiting":
          counters.waiting++
          break
        default:
          counters.pulling++
      }
    }
  }
  return counters
}
