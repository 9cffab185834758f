import type { Duration } from "effect"
import type { PullRequest } from "../CriRuntime.ts"
import type { CriError } from "../errors.ts"

// What a simulated runtime keeps of the calls made to it.

export type PullOutcome =
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Succeeded"; readonly imageId: string }
  | { readonly _tag: "Failed"; readonly error: CriError }
  | { readonly _tag: "Cancelled" }

export interface PullRecord {
  readonly image: string
  /** Whether the request carried credentials; the credentials themselves are not kept. */
  readonly authenticated: boolean
  readonly sandboxConfig: PullRequest["sandboxConfig"]
  readonly timeout: Duration.Duration
  /** Clock millis. */
  readonly startedAt: number
  readonly endedAt: number | undefined
  readonly outcome: PullOutcome
}

export interface CallRecord {
  readonly method: "version" | "pullImage" | "imageStatus" | "listImages" | "removeImage" | "listImageRecords" | "setImageLabels"
  readonly image?: string
  readonly at: number
}
