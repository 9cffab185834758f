/**
 * A registry host's concurrent-pull limit under throttling (issue 28, part 3): additive increase,
 * multiplicative decrease, as TCP sizes its congestion window. Nodes reporting that the registry
 * throttled them halve the limit, at most once per window so that a burst of reports from one
 * overload counts once (TCP: once per round trip); each pull that succeeds adds 1/limit, so a
 * limit's worth of successes adds one. The limit never goes below 1 nor above
 * `--max-concurrent-pulls-per-registry`. Without that flag it lasts only while it holds pulls
 * back: once it has grown past everything pulling and waiting on the registry it is dropped, and
 * the next throttling starts again from what is pulling then.
 */

/** The limit throttling set, kept fractional so that additive increase can grow it by 1/limit. */
export interface ThrottledLimit {
  readonly limit: number
  /** When it was last lowered (Clock millis). */
  readonly loweredAt: number
}

/** What the nodes said since the last step, and where the registry stands now. */
export interface LimitSignals {
  readonly now: number
  /** New reports of throttled pulls from this registry. */
  readonly throttled: number
  /** Pulls from this registry that succeeded. */
  readonly succeeded: number
  /** Nodes pulling from the registry now. */
  readonly inFlight: number
  /** Nodes held back on the registry now. */
  readonly held: number
  /** `--max-concurrent-pulls-per-registry`, when set. */
  readonly max: number | undefined
}

/** At most one decrease per window: the reports of one overload arrive over a few seconds. */
export const decreaseWindowMillis = 10_000

/** The next limit; undefined when throttling sets none (the flag's limit, or none, applies). */
export const stepPullLimit = (current: ThrottledLimit | undefined, signals: LimitSignals): ThrottledLimit | undefined => {
  const { held, inFlight, max, now, succeeded, throttled } = signals
  if (throttled > 0) {
    if (current !== undefined && now - current.loweredAt < decreaseWindowMillis) return current
    const from = current?.limit ?? Math.min(max ?? Number.POSITIVE_INFINITY, Math.max(1, inFlight))
    return { limit: Math.max(1, Math.floor(from / 2)), loweredAt: now }
  }
  if (current === undefined || succeeded <= 0) return current
  let limit = current.limit
  for (let i = 0; i < succeeded; i++) limit += 1 / Math.floor(limit)
  if (max !== undefined ? limit >= max : limit > inFlight + held) return undefined
  return { limit, loweredAt: current.loweredAt }
}

/** The limit in whole pulls. */
export const wholeLimit = (limit: ThrottledLimit): number => Math.floor(limit.limit)
