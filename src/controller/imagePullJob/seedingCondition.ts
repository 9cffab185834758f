// Which phase of seed-first fan-out a job is in (seedNodes.ts, pullOrder.ts seedFirst), kept in its
// condition `Seeded` so that a job past seeding stays past it: a controller restarted, a Never
// job's daily pulls again or a new node do not make it seed again. Pure.
import { seeded } from "../../api/imagePullJob.ts"
import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { resolveSeeds, type SeedNodes } from "./seedNodes.ts"

const invalidSeedNodesReason = "InvalidSeedNodes"

export interface SeedingInput {
  readonly seedNodes: SeedNodes
  readonly previous: ReadonlyArray<Condition> | undefined
  /** The job starts over on every node (an Always-policy job's new generation): it seeds again. */
  readonly repull: boolean
  readonly desired: number
  readonly succeeded: number
  /** The job's image, quoted. */
  readonly image: string
}

export interface SeedingVerdict {
  /** The seed nodes while the job seeds now: only they may pull (pullOrder.ts seedFirst); absent: no seeding now. */
  readonly seeds: number | undefined
  /** The condition to set, or none (no change, or the job never seeded). */
  readonly condition: Omit<Condition, "lastTransitionTime"> | undefined
  readonly event: ObjectEvent | undefined
}

const nodes = (n: number) => `${n} ${n === 1 ? "node" : "nodes"}`
const none: SeedingVerdict = { seeds: undefined, condition: undefined, event: undefined }

/**
 * Where the job stands: seeding (`Seeded=False`, reason `Seeding`) until its seeds succeeded, then
 * `Seeded=True` (a Normal event `Seeded` says the others start now), for good. A bad annotation
 * value is `Seeded=False` reason `InvalidSeedNodes` with a Warning each time it first shows or
 * changes, and no seeding; seeding turned off before the seeds succeeded is reason `SeedingOff`.
 * A job without targets has nothing to seed yet.
 */
export const seedingVerdict = ({ desired, image, previous, repull, seedNodes, succeeded }: SeedingInput): SeedingVerdict => {
  const before = previous?.find((c) => c.type === seeded)
  if (seedNodes._tag === "Invalid") {
    const news = before?.reason !== invalidSeedNodesReason || before.message !== seedNodes.message
    return {
      seeds: undefined,
      condition: { type: seeded, status: "False", reason: invalidSeedNodesReason, message: seedNodes.message },
      event: news ? { type: "Warning", reason: invalidSeedNodesReason, message: seedNodes.message } : undefined
    }
  }
  if (seedNodes._tag === "Off") {
    if (before === undefined || before.status === "True" || before.reason === "SeedingOff") return none
    const message = "no seed nodes asked for: every node pulls within parallelism"
    return { seeds: undefined, condition: { type: seeded, status: "False", reason: "SeedingOff", message }, event: undefined }
  }
  if (before?.status === "True" && !repull) return none
  const seeds = resolveSeeds(seedNodes.count, desired)
  if (seeds === 0) return none
  if (succeeded >= seeds) {
    const rest = desired - seeds
    const message =
      rest === 0
        ? `every target was a seed: ${image} pulled on ${nodes(seeds)}`
        : `${image} pulled on ${nodes(seeds)} first, then on the other ${rest}`
    return {
      seeds: undefined,
      condition: { type: seeded, status: "True", reason: "SeedsPulled", message },
      event: {
        type: "Normal",
        reason: seeded,
        message: rest === 0 ? `pulled ${image} on every node, all seeds` : `pulled ${image} on ${nodes(seeds)}: starting the other ${rest}`
      }
    }
  }
  const message =
    desired === seeds
      ? `pulling ${image} on ${nodes(seeds)}, every target a seed`
      : `pulling ${image} on ${nodes(seeds)} first, then on the other ${desired - seeds}`
  return { seeds, condition: { type: seeded, status: "False", reason: "Seeding", message }, event: undefined }
}

/**
 * At the end of a job that never got past seeding (its seeds all failed, or its deadline came):
 * `Seeded=False` reason `NotSeeded`, so that the condition does not go on saying it seeds.
 */
export const unseededAtEnd = (verdict: SeedingVerdict, previous: ReadonlyArray<Condition> | undefined): SeedingVerdict["condition"] => {
  const condition = verdict.condition ?? previous?.find((c) => c.type === seeded)
  return condition?.reason === "Seeding"
    ? { type: seeded, status: "False", reason: "NotSeeded", message: "the job ended before its seed nodes pulled the image" }
    : verdict.condition
}
