import { escapeForeignText, quoteBounded } from "../api/goQuote.ts"
import { throttledMessage } from "../api/registryThrottle.ts"
import type { PullError } from "./attemptPolicy.ts"
import { formatBytes, insufficientDiskDetail } from "./minFreeDisk.ts"
import type { PullStalled } from "./stallClock.ts"

/**
 * Words for status messages, events and logs. They are built from the reference, counts and the
 * runtime's message only: the runtime layer already keeps credentials out of its messages, and
 * nothing here ever sees one. The reference is the user's (a NodeImage is written by hand too) and
 * the runtime's message may repeat it raw: the one is quoted, the other escaped, both bounded
 * (goQuote.ts), so neither reaches a terminal as a control sequence.
 */

const seconds = (millis: number): string => {
  const s = millis / 1000
  return Number.isInteger(s) ? `${s}s` : `${s.toFixed(1)}s`
}

/** One failed attempt, as the user should read it. */
export const describePullError = (error: PullError, timeoutMillis: number): string => {
  switch (error._tag) {
    case "DeadlineExceeded":
      return `pull timed out after ${seconds(timeoutMillis)}`
    case "RuntimeUnavailable":
      return `container runtime unavailable: ${escapeForeignText(error.message)}`
    case "ImageNotFound":
      return `image not found: ${escapeForeignText(error.message)}`
    case "Unauthorized":
      return `registry refused the credentials: ${escapeForeignText(error.message)}`
    case "RegistryThrottled":
      return `registry throttled the pull: ${escapeForeignText(error.message)}`
    case "InvalidReference":
      return `invalid image reference: ${escapeForeignText(error.message)}`
    case "RuntimeFailure":
      return escapeForeignText(error.message)
    case "InsufficientDisk":
      return insufficientDiskDetail(error)
    case "PullStalled":
      return stalledDetail(error)
  }
}

/** How far the stalled pull came: its bytes of the image's, or that the manifest never came. */
export const stalledDetail = (error: PullStalled): string =>
  `pull stalled: no bytes received for ${seconds(error.stalledMillis)}, ` +
  (error.bytesTotal > 0 ? `at ${formatBytes(error.bytesDone)} of ${formatBytes(error.bytesTotal)}` : "before the image's manifest came") +
  " (--pull-progress-timeout)"

/**
 * When the registry refused every credential tried (or the anonymous pull), say where they came
 * from: the pull secrets and credential providers by name, never a credential.
 */
export const unauthorizedDetail = (error: string, sources: ReadonlyArray<string>): string =>
  `${error} (tried ${sources.length === 0 ? "anonymously: no pull secret or credential provider had credentials for it" : sources.join(", ")})`

export const deadlinePassed = "pulling exceeds the activeDeadlineSeconds"

export const retryingMessage = (attempt: number, attempts: number, error: string, delayMillis: number): string =>
  `attempt ${attempt} of ${attempts} failed: ${error}; retrying in ${seconds(delayMillis)}`

/** A throttled attempt waiting for its retry: leads with RegistryThrottled (api/registryThrottle.ts). */
export const throttledRetryMessage = (throttled: number, bound: number, error: string, delayMillis: number): string =>
  throttledMessage(
    `${error}; retrying in ${seconds(delayMillis)} (throttled retry ${throttled} of ${bound}, not counted against backoffLimit)`
  )

export const failedMessage = (reference: string, attempts: number, error: string): string =>
  `failed to pull image ${quoteBounded(reference)}${attempts > 1 ? ` after ${attempts} attempts` : ""}: ${error}`

export const pulledMessage = (reference: string, node: string, millis: number): string =>
  `pulled image ${quoteBounded(reference)} on node ${node} in ${seconds(millis)}`

export const presentMessage = (reference: string, node: string): string =>
  `image ${quoteBounded(reference)} is already present on node ${node}`

/** Problems with pull secrets and credential providers are only worth a word when the pull failed. */
export const withCredentialProblems = (message: string, problems: ReadonlyArray<string>): string =>
  problems.length === 0 ? message : `${message} (${escapeForeignText(problems.join("; "))})`
