import { Data } from "effect"

/**
 * A reconcile that failed but may succeed later (the API server was unavailable, a write met a
 * conflict): retried after the key's rate-limited delay.
 */
export class RetryableError extends Data.TaggedError("RetryableError")<{ readonly cause: unknown }> {}

/**
 * A reconcile that cannot succeed by retrying (controller-runtime's TerminalError; raised by the
 * pre-download reconcile when the server rejects its jobs as invalid): logged once,
 * counted as an error and not requeued; the next change that concerns the key wakes it again.
 */
export class TerminalError extends Data.TaggedError("TerminalError")<{ readonly cause: unknown }> {}

export type ReconcileError = RetryableError | TerminalError

/** A reconcile's failure as the workers see it: retryable unless it says it is terminal. */
export const retryable = (cause: unknown): ReconcileError =>
  cause instanceof RetryableError || cause instanceof TerminalError ? cause : new RetryableError({ cause })
