import { type Cause, Effect, Result } from "effect"
import { CriRuntime } from "../cri/CriRuntime.ts"
import type { CriError } from "../cri/errors.ts"
import type { HealthCheck } from "../ops/server.ts"

/** Why Version failed, in a word: the runtime's message, else the failure's name. */
const failureMessage = (failure: CriError | Cause.TimeoutError): string => {
  const message = "message" in failure ? failure.message : ""
  return message !== "" ? message : failure._tag
}

/** Liveness of the runtime: a CRI Version call answers. */
export const runtimeCheck: Effect.Effect<HealthCheck, never, CriRuntime> = Effect.gen(function* () {
  const cri = yield* CriRuntime
  const version = yield* Effect.result(cri.version.pipe(Effect.timeout("5 seconds")))
  if (Result.isSuccess(version)) {
    return { name: "runtime", ok: true, message: `${version.success.runtimeName} ${version.success.runtimeVersion}` }
  }
  return { name: "runtime", ok: false, message: failureMessage(version.failure) }
})

export const watchCheck = (hasSynced: () => boolean): HealthCheck =>
  hasSynced() ? { name: "nodeimage-watch", ok: true } : { name: "nodeimage-watch", ok: false, message: "NodeImage not yet listed" }
