// When preheat lifts a node's startup taint: every gate succeeded, a gate failed, or the timeout.
import type { WarmOutcome } from "../../ops/metrics.ts"
import type { Gate } from "./gates.ts"

export interface WarmInput {
  /** Whether the Node carries preheat's startup taint now. */
  readonly tainted: boolean
  /** When this controller first saw the taint (ms); undefined: now is the first sighting. */
  readonly firstSeen: number | undefined
  readonly now: number
  /** `--warm-timeout`, ms. */
  readonly timeoutMs: number
  readonly gates: ReadonlyArray<Gate>
}

export type WarmDecision =
  /** Not (or no longer) held: nothing to do, nothing to remember. */
  | { readonly action: "none" }
  /** Held: look again at `wakeAt` (the timeout) or when a gate changes. */
  | { readonly action: "hold"; readonly firstSeen: number; readonly wakeAt: number }
  | {
      readonly action: "release"
      readonly outcome: WarmOutcome
      readonly firstSeen: number
      /** The gates that are not warm on the node (empty when warmed). */
      readonly notWarmed: ReadonlyArray<Gate>
      /** The gates that are. */
      readonly warmed: ReadonlyArray<Gate>
    }

/**
 * The decision for one node (issue 27): released once every job that must warm it has succeeded
 * on it (at once when none must), at once when one of them failed there, and `timeoutMs` after the
 * taint was first seen whatever is still pulling: a node is never held forever.
 */
export const decideWarming = (input: WarmInput): WarmDecision => {
  if (!input.tainted) return { action: "none" }
  const firstSeen = input.firstSeen ?? input.now
  const warmed = input.gates.filter((g) => g.state.phase === "succeeded")
  const notWarmed = input.gates.filter((g) => g.state.phase !== "succeeded")
  if (notWarmed.length === 0) return { action: "release", outcome: "warmed", firstSeen, notWarmed, warmed }
  if (notWarmed.some((g) => g.state.phase === "failed")) return { action: "release", outcome: "failed", firstSeen, notWarmed, warmed }
  const wakeAt = firstSeen + input.timeoutMs
  if (wakeAt <= input.now) return { action: "release", outcome: "timeout", firstSeen, notWarmed, warmed }
  return { action: "hold", firstSeen, wakeAt }
}

/** What was not warmed, for the events: `job ns/a image nginx:1.25.3 (pulling 40%)`, joined. */
export const notWarmedText = (gates: ReadonlyArray<Gate>): string =>
  gates.map((g) => `job ${g.job} image ${g.image} (${g.state.phase === "succeeded" ? "pulled" : g.state.why})`).join("; ")
