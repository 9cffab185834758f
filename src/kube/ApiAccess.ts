// The one place that sees how the live client's requests fare (layers/kube/live/accessReport.ts
// reports each outcome) and says what keeps them from the API server: a WARN when a cause starts
// and at most once a minute while it lasts, INFO when it ends, and the `api-access` readiness check.
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import type { HealthCheck } from "../ops/server.ts"
import { type AccessLog, type AccessOutcome, type AccessState, emptyAccessState, expire, problemsOf, step } from "./accessProblems.ts"
import { isAccessProblem, type KubeError } from "./errors.ts"

export class ApiAccess extends Context.Service<
  ApiAccess,
  {
    /** One request's outcome. */
    readonly report: (outcome: AccessOutcome) => Effect.Effect<void>
    /** True while no problem is known: a request that went fine then has nothing to report. */
    readonly quiet: () => boolean
    /** `api-access`: fails, naming the causes, while any problem lasts. */
    readonly check: Effect.Effect<HealthCheck>
  }
>()("preheat/kube/ApiAccess") {
  static readonly layer: Layer.Layer<ApiAccess> = Layer.sync(ApiAccess, () => makeApiAccess())
}

/**
 * The level for a retried request's failure: DEBUG when an ApiAccess is there to say it (at WARN,
 * once a minute at most), else WARN. Each watch and the lease would otherwise repeat a 401 at
 * every retry.
 */
export const retryLogLevel = (access: Option.Option<ApiAccess["Service"]>, error: KubeError): "Debug" | "Warn" =>
  Option.isSome(access) && isAccessProblem(error) ? "Debug" : "Warn"

const duration = (millis: number): string => Duration.format(Duration.seconds(Math.round(millis / 1000)))

const say = (log: AccessLog): Effect.Effect<void> => {
  switch (log._tag) {
    case "Started":
      return Effect.logWarning(`API access failing: ${log.problem.message}`).pipe(Effect.annotateLogs({ request: log.problem.request }))
    case "Continues":
      return Effect.logWarning(`API access still failing: ${log.problem.message}`).pipe(
        Effect.annotateLogs({ request: log.problem.request, failingFor: duration(log.forMillis) })
      )
    case "Ended":
      return Effect.logInfo(log.seen === "answered" ? "API access recovered" : "API access problem no longer seen").pipe(
        Effect.annotateLogs({ about: log.problem.key, failedFor: duration(log.afterMillis), was: log.problem.message })
      )
  }
}

const sayAll = (logs: ReadonlyArray<AccessLog>): Effect.Effect<void> =>
  logs.length === 0 ? Effect.void : Effect.forEach(logs, say, { discard: true })

export const makeApiAccess = (): ApiAccess["Service"] => {
  let state: AccessState = emptyAccessState
  const apply = (next: (now: number) => { readonly state: AccessState; readonly logs: ReadonlyArray<AccessLog> }) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.suspend(() => {
        const result = next(now)
        state = result.state
        return sayAll(result.logs)
      })
    )
  return ApiAccess.of({
    report: (outcome) => apply((now) => step(state, outcome, now)),
    quiet: () => state.size === 0,
    check: Effect.andThen(
      apply((now) => expire(state, now)),
      Effect.sync((): HealthCheck => {
        const problems = problemsOf(state)
        return problems.length === 0
          ? { name: "api-access", ok: true }
          : { name: "api-access", ok: false, message: problems.map((problem) => problem.message).join("; ") }
      })
    )
  })
}
