import { Effect, Predicate, Result } from "effect"
import { CriRuntime } from "../cri/CriRuntime.ts"
import type { HealthCheck } from "../ops/server.ts"

/** Liveness of the runtime: a CRI Version call answers. */
export const runtimeCheck: Effect.Effect<HealthCheck, never, CriRuntime> = Effect.gen(function* () {
  const cri = yield* CriRuntime
  const version = yield* Effect.result(cri.version.pipe(Effect.timeout("5 seconds")))
  if (Result.isSuccess(version)) {
    return { name: "runtime", ok: true, message: `${version.success.runtimeName} ${version.success.runtimeVersion}` }
  }
  const error: unknown = version.failure
  const message =
    Predicate.hasProperty(error, "message") && Predicate.isString(error.message) && error.message !== ""
      ? error.message
      : Predicate.hasProperty(error, "_tag")
        ? String(error._tag)
        : "no answer"
  return { name: "runtime", ok: false, message }
})

export const watchCheck = (hasSynced: () => boolean): HealthCheck =>
  hasSynced() ? { name: "nodeimage-watch", ok: true } : { name: "nodeimage-watch", ok: false, message: "NodeImage not yet listed" }
