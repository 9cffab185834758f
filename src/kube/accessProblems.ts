// What is wrong with reaching the API server right now, and what to say about it: a pure state
// machine over request outcomes (ApiAccess.ts runs it with the clock and the logger). A cause is
// said at WARN when it starts, again at most once a minute while requests keep meeting it, at once
// when it changes (refused connection -> TLS), and at INFO when it ends.
import { Duration } from "effect"

/** One thing in the way of the client's requests. */
export interface AccessProblem {
  /**
   * What it is about; one problem per key at a time: "credentials" (401), "connection" (TLS,
   * unreachable), or the RBAC rule a 403 names (one key per verb, resource and namespace).
   */
  readonly key: string
  /** Which cause under that key; a different one is said at once. */
  readonly cause: string
  /** What is wrong and what to fix; the readiness check's reason. Never holds credentials. */
  readonly message: string
  /** The request that met it (`list NodeImage`), for the log line. */
  readonly request: string
}

/** What one request says about access: a problem it met, and the keys its answer shows are fine. */
export interface AccessOutcome {
  readonly problem?: AccessProblem | undefined
  readonly fine: ReadonlyArray<string>
}

interface Tracked {
  readonly problem: AccessProblem
  readonly since: number
  readonly loggedAt: number
  readonly seenAt: number
}

export type AccessState = ReadonlyMap<string, Tracked>

export const emptyAccessState: ReadonlyMap<string, Tracked> = new Map()

export type AccessLog =
  | { readonly _tag: "Started"; readonly problem: AccessProblem }
  | { readonly _tag: "Continues"; readonly problem: AccessProblem; readonly forMillis: number }
  | { readonly _tag: "Ended"; readonly problem: AccessProblem; readonly afterMillis: number; readonly seen: "answered" | "unseen" }

/** A cause is said again at most this often while it lasts. */
const repeatEvery = Duration.minutes(1)
/**
 * A problem no request has met for this long is over: a 403 on a one-off write (an object since
 * deleted) must not keep the process unready. Watches retry every 30 s at most, so a lasting cause
 * is met far more often than this.
 */
const forgetAfter = Duration.minutes(5)

const repeatMillis = Duration.toMillis(repeatEvery)
const forgetMillis = Duration.toMillis(forgetAfter)

/** Problems no request met for `forgetAfter`, dropped. */
export const expire = (state: AccessState, now: number): { readonly state: AccessState; readonly logs: ReadonlyArray<AccessLog> } => {
  const stale = [...state.values()].filter((tracked) => now - tracked.seenAt >= forgetMillis)
  if (stale.length === 0) return { state, logs: [] }
  const next = new Map(state)
  for (const tracked of stale) next.delete(tracked.problem.key)
  return {
    state: next,
    logs: stale.map((tracked) => ({ _tag: "Ended", problem: tracked.problem, afterMillis: now - tracked.since, seen: "unseen" }))
  }
}

/** The state after one request's outcome at `now`, and what to log about it. */
export const step = (
  state: AccessState,
  outcome: AccessOutcome,
  now: number
): { readonly state: AccessState; readonly logs: ReadonlyArray<AccessLog> } => {
  if (state.size === 0 && outcome.problem === undefined) return { state, logs: [] }
  const expired = expire(state, now)
  const logs: Array<AccessLog> = [...expired.logs]
  let next: Map<string, Tracked> | undefined
  const writable = (): Map<string, Tracked> => (next ??= new Map(expired.state))
  for (const key of outcome.fine) {
    const tracked = expired.state.get(key)
    if (tracked === undefined) continue
    writable().delete(key)
    logs.push({ _tag: "Ended", problem: tracked.problem, afterMillis: now - tracked.since, seen: "answered" })
  }
  const problem = outcome.problem
  if (problem !== undefined) {
    const tracked = expired.state.get(problem.key)
    if (tracked === undefined || tracked.problem.cause !== problem.cause) {
      writable().set(problem.key, { problem, since: now, loggedAt: now, seenAt: now })
      logs.push({ _tag: "Started", problem })
    } else if (now - tracked.loggedAt >= repeatMillis) {
      writable().set(problem.key, { problem, since: tracked.since, loggedAt: now, seenAt: now })
      logs.push({ _tag: "Continues", problem, forMillis: now - tracked.since })
    } else {
      writable().set(problem.key, { ...tracked, problem, seenAt: now })
    }
  }
  return { state: next ?? expired.state, logs }
}

/** The current problems, oldest first. */
export const problemsOf = (state: AccessState): ReadonlyArray<AccessProblem> =>
  [...state.values()].sort((a, b) => a.since - b.since).map((tracked) => tracked.problem)
