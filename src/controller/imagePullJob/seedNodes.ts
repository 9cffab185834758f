// How many of a job's nodes pull first, before the others start (seed-first fan-out for
// peer-to-peer mirrors such as Spegel: the seeds fetch from the registry, the rest from them):
// the job's annotation, else the controller's --seed-nodes. Pure.

/** The job annotation: a count (`"2"`) or a percentage of its target nodes (`"5%"`, rounded up). */
export const seedNodesAnnotation = "preheat.kruise.io/seed-nodes"

/** A number of seed nodes, or a share of the targets, as parallelism's int-or-percentage. */
export type SeedCount = number | `${number}%`

export type SeedNodes =
  | { readonly _tag: "Off" }
  | { readonly _tag: "On"; readonly count: SeedCount }
  /** A bad annotation value, in words: the job pulls without seeding and says so. */
  | { readonly _tag: "Invalid"; readonly message: string }

const count = /^(0|[1-9][0-9]{0,8})$/
const percentage = /^(0|[1-9][0-9]?|100)%$/

/** What a value must be, for messages. */
export const seedCountGrammar = "a count of nodes (0 to 999999999) or a percentage of the job's nodes (0% to 100%)"

/** The count a value writes, undefined when it writes none; `0` and `0%` are a count of none (seeding off). */
export const parseSeedCount = (value: string): SeedCount | undefined => {
  if (count.test(value)) return Number(value)
  if (percentage.test(value)) return value as `${number}%`
  return undefined
}

const isZero = (seeds: SeedCount): boolean => seeds === 0 || seeds === "0%"

/**
 * A job's seeding: its annotation when it has one (`"0"` turns the controller's default off for
 * it), else the controller's default (`--seed-nodes`, validated at start), else none.
 */
export const seedNodesOf = (
  annotations: Readonly<Record<string, string>> | undefined,
  controllerDefault: SeedCount | undefined
): SeedNodes => {
  const value = annotations?.[seedNodesAnnotation]
  if (value === undefined)
    return controllerDefault === undefined || isZero(controllerDefault) ? { _tag: "Off" } : { _tag: "On", count: controllerDefault }
  const parsed = parseSeedCount(value)
  if (parsed === undefined) {
    return {
      _tag: "Invalid",
      message: `annotation ${seedNodesAnnotation}: ${JSON.stringify(value)} is not ${seedCountGrammar}: the job pulls without seeding`
    }
  }
  return isZero(parsed) ? { _tag: "Off" } : { _tag: "On", count: parsed }
}

/**
 * The seed nodes among `desired` targets: the count, or the share rounded up (so "1%" of 3 nodes is
 * one seed, never none), at most every target.
 */
export const resolveSeeds = (seeds: SeedCount, desired: number): number => {
  const wanted = typeof seeds === "number" ? seeds : Math.ceil((Number.parseInt(seeds, 10) * desired) / 100)
  return Math.min(wanted, desired)
}
