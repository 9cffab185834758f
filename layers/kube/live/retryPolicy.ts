// When the client itself tries a request again, as client-go's rest client does (with_retry.go):
// any verb the server answered 429, or 5xx with Retry-After, after the seconds it asked for (the
// server did not act on it: API Priority and Fairness rejects before handling); and a read whose
// answer never came or was a 5xx, with backoff, since reading twice changes nothing. Writes that
// failed otherwise go back to the caller, whose queue retries them with its own backoff after
// reading the object again.
import { Duration, Predicate } from "effect"
import type { ConnectionProblem } from "../../../src/kube/errors.ts"

/** client-go's default maxRetries. */
export const maxRetries = 10
/** Backoff of retried reads: 250 ms doubling, at most 8 s apart. */
export const readRetryBase = Duration.millis(250)
export const readRetryCap = Duration.seconds(8)
/** A server asking for longer than this is still obeyed, but for no more than this. */
const retryAfterCap = Duration.minutes(1)

export type RetryDecision =
  | { readonly _tag: "Done" }
  /** Again after exactly this long, as the server asked. */
  | { readonly _tag: "After"; readonly delay: Duration.Duration }
  /** Again after the backoff's next delay. */
  | { readonly _tag: "Backoff" }

const done: RetryDecision = { _tag: "Done" }
const backoff: RetryDecision = { _tag: "Backoff" }

/**
 * Retry-After in whole seconds (client-go reads only that form), else the Status body's
 * details.retryAfterSeconds; undefined when neither says.
 */
export const retryAfterOf = (header: string | undefined, body: unknown): Duration.Duration | undefined => {
  const details = Predicate.isObject(body) ? body["details"] : undefined
  const seconds =
    header !== undefined && /^\s*\d+\s*$/.test(header)
      ? Number(header)
      : Predicate.isObject(details)
        ? details["retryAfterSeconds"]
        : undefined
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
    ? Duration.min(Duration.seconds(seconds), retryAfterCap)
    : undefined
}

/** What to do after an answer with this status (and Retry-After, if any) to a request with this method. */
export const decideOnAnswer = (method: string, status: number, retryAfter: Duration.Duration | undefined): RetryDecision => {
  // A 429 without Retry-After still means "later": client-go's default for it is one second.
  if (status === 429) return { _tag: "After", delay: retryAfter ?? Duration.seconds(1) }
  if (status >= 500 && retryAfter !== undefined) return { _tag: "After", delay: retryAfter }
  if (status >= 500 && method === "GET") return backoff
  return done
}

/**
 * What to do when no answer came (refused, reset, timed out). A failed TLS handshake fails the same
 * way every time: said at once rather than after a minute of retries.
 */
export const decideOnNoAnswer = (method: string, connection?: ConnectionProblem): RetryDecision =>
  method === "GET" && connection?._tag !== "Tls" ? backoff : done
