import { createHash } from "node:crypto"
import { Duration, Effect, Result } from "effect"
import { bandwidthLatency, fakeCriRuntimeLayer } from "../../layers/fakeCriRuntime.ts"
import { type ImageReference, parseImageReference } from "../api/imageReference.ts"
import type { OpsServerError } from "../ops/server.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import type { Metrics } from "../ops/metrics.ts"
import type { WorkQueues } from "../workqueue/WorkQueues.ts"
import { type DaemonOptions, serveDaemon } from "./daemon.ts"

/**
 * `preheat daemon --simulated-runtime`: the daemon on the fake CRI runtime instead of a node's
 * containerd, for the whole-system tests and the local-cluster mode. Pulls take realistic,
 * reproducible times (a link of `bytesPerSecond` plus a fixed overhead) so parallelism,
 * progress and controller restarts can be watched in real time.
 */
export const simulatedLink = { bytesPerSecond: 50_000_000, overhead: Duration.millis(200) } as const

const mebibyte = 1024 * 1024

/**
 * Every image the simulated registry is asked for exists; its size (20 to 250 MiB) comes from a
 * hash of the normalised reference, so every daemon, every run and the tests agree on it.
 */
export const simulatedImageSize = (ref: ImageReference): number => {
  const key = `${ref.domain}/${ref.path}:${ref.tag ?? "latest"}${ref.digest === undefined ? "" : `@${ref.digest}`}`
  const hash = createHash("sha256").update(key).digest().readUInt32BE(0)
  return (20 + (hash % 231)) * mebibyte
}

/** How long the simulated runtime takes to pull `image` (for tests that need a slow or fast pull). */
export const simulatedPullTime = (image: string): Duration.Duration => {
  const parsed = parseImageReference(image)
  if (Result.isFailure(parsed)) throw parsed.failure
  const reference = parsed.success
  return bandwidthLatency(simulatedLink)({ image, reference, size: simulatedImageSize(reference) })
}

export const simulatedRuntimeLayer = () =>
  fakeCriRuntimeLayer({ latency: bandwidthLatency(simulatedLink), synthesizedSize: simulatedImageSize })

/** runDaemon with the simulated runtime in place of the live CRI one; everything else is the same. */
export const runSimulatedDaemon = (options: DaemonOptions): Effect.Effect<never, OpsServerError, KubeApi | Metrics | WorkQueues> =>
  Effect.gen(function* () {
    yield* serveDaemon(options)
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(simulatedRuntimeLayer()))
