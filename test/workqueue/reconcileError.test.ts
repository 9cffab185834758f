import { assert, describe, it } from "@effect/vitest"
import { Unavailable } from "../../src/kube/errors.ts"
import { RetryableError, retryable, TerminalError } from "../../src/workqueue/ReconcileError.ts"

describe("retryable", () => {
  it("wraps a reconcile's own failure as retryable, keeping it as the cause", () => {
    const cause = new Unavailable({ message: "connection refused" })
    const error = retryable(cause)
    assert.instanceOf(error, RetryableError)
    assert.strictEqual(error.cause, cause)
  })

  it("leaves a failure that already says retryable or terminal as it is", () => {
    const terminal = new TerminalError({ cause: "never" })
    const again = new RetryableError({ cause: "later" })
    assert.strictEqual(retryable(terminal), terminal)
    assert.strictEqual(retryable(again), again)
  })
})
