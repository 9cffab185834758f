import { isDeepStrictEqual } from "node:util"
import { Duration, Effect, type FileSystem, Schedule } from "effect"
import type { Scope } from "effect"
import type { KubeletImageVerification } from "../../api/kubeletImageVerification.ts"
import { Metrics } from "../../ops/metrics.ts"
import { type KubeletConfigPaths, readKubeletVerification } from "./read.ts"

/**
 * The kubelet reads its configuration when it starts; the file is read again this often so that a
 * change made for the kubelet's next start (an upgrade, an operator) reaches the status without
 * restarting the daemon. A read of a small file, compared in memory: nothing is written unless it changed.
 */
const kubeletConfigInterval = Duration.minutes(1)

/**
 * Reads the kubelet's configuration now and then every `interval`; each time what it says
 * changes (first read included), the policy goes to the metric, the log (once per change: Info,
 * or a Warning when the file is there but unusable) and `changed` (the NodeImage status).
 */
export const watchKubeletConfig = Effect.fnUntraced(function* (options: {
  readonly fs: FileSystem.FileSystem
  readonly paths: KubeletConfigPaths
  readonly interval?: Duration.Input
  readonly changed: (verification: KubeletImageVerification) => Effect.Effect<void>
}): Effect.fn.Return<void, never, Metrics | Scope.Scope> {
  const metrics = yield* Metrics
  let last: KubeletImageVerification | undefined
  const look = Effect.gen(function* () {
    const { found, verification } = yield* readKubeletVerification(options.fs, options.paths)
    if (last !== undefined && isDeepStrictEqual(last, verification)) return
    last = verification
    yield* metrics.setImageVerificationPolicy(verification.policy)
    const said = Effect.annotateLogs({
      policy: verification.policy,
      source: verification.source ?? options.paths.file,
      ...(verification.message === undefined ? {} : { detail: verification.message })
    })
    if (verification.policy !== "Unknown") yield* Effect.logInfo("kubelet image verification policy read").pipe(said)
    else if (!found) yield* Effect.logInfo("no kubelet configuration: the node's image verification policy is unknown").pipe(said)
    else yield* Effect.logWarning("kubelet configuration unusable: the node's image verification policy is unknown").pipe(said)
    yield* options.changed(verification)
  }).pipe(Effect.withSpan("KubeletConfig.read"))
  yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(options.interval ?? kubeletConfigInterval)))
})
