import { Effect, Exit, Layer, Option, Stream } from "effect"
import { type ApiResult, type ApiVerb, Metrics } from "../ops/metrics.ts"
import type { KubeError } from "./errors.ts"
import { KubeApi, type Subresource } from "./KubeApi.ts"
import type { Resource } from "./resources.ts"

const apiResultOfTag: Record<KubeError["_tag"], ApiResult> = {
  NotFound: "not_found",
  AlreadyExists: "already_exists",
  Conflict: "conflict",
  Gone: "gone",
  Invalid: "invalid",
  Unauthorized: "unauthorized",
  Forbidden: "forbidden",
  Unavailable: "unavailable"
}

/** The api_requests_total result of a typed KubeApi error. */
const apiResultOf = (error: KubeError): ApiResult => apiResultOfTag[error._tag]

/** `NodeImage/status` for the status subresource, so status churn is told apart from spec writes. */
const kindLabel = (resource: Resource, subresource: Subresource | undefined): string =>
  subresource === "status" ? `${resource.kind}/status` : resource.kind

/**
 * A watch counts once, when it ends: ok when the server or the consumer (by interruption) closed
 * it, else its error (typically gone, which sends the caller back to list).
 */
const watchResult = (exit: Exit.Exit<unknown, KubeError>): ApiResult | undefined => {
  if (Exit.isSuccess(exit)) return "ok"
  const error = Exit.findErrorOption(exit)
  if (Option.isSome(error)) return apiResultOf(error.value)
  return Exit.hasDies(exit) ? undefined : "ok"
}

/**
 * Counts every call of `inner` in preheat_api_requests_total once it has an outcome. Interrupted
 * calls and defects are not counted: neither says what the server answered.
 */
const instrumentKubeApi = (inner: KubeApi["Service"], metrics: Metrics["Service"]): KubeApi["Service"] => {
  const counted =
    (verb: ApiVerb, kind: string) =>
    <A, E extends KubeError, R>(call: Effect.Effect<A, E, R>) =>
      call.pipe(
        Effect.tap(() => metrics.countApiRequest(verb, kind, "ok")),
        Effect.tapError((error) => metrics.countApiRequest(verb, kind, apiResultOf(error)))
      )

  return KubeApi.of({
    get: (resource, key) => inner.get(resource, key).pipe(counted("get", resource.kind)),
    list: (resource, options) => inner.list(resource, options).pipe(counted("list", resource.kind)),
    watch: (resource, options) =>
      inner.watch(resource, options).pipe(
        Stream.onExit((exit) => {
          const result = watchResult(exit)
          return result === undefined ? Effect.void : metrics.countApiRequest("watch", resource.kind, result)
        })
      ),
    create: (resource, object) => inner.create(resource, object).pipe(counted("create", resource.kind)),
    update: (resource, object, subresource) =>
      inner.update(resource, object, subresource).pipe(counted("update", kindLabel(resource, subresource))),
    patch: (resource, key, patch, subresource) =>
      inner.patch(resource, key, patch, subresource).pipe(counted("patch", kindLabel(resource, subresource))),
    delete: (resource, key, preconditions) => inner.delete(resource, key, preconditions).pipe(counted("delete", resource.kind))
  })
}

/** Replaces the KubeApi in context with one that counts its calls; provide the real one beneath it. */
const instrumentedKubeApiLayer: Layer.Layer<KubeApi, never, KubeApi | Metrics> = Layer.effect(
  KubeApi,
  Effect.gen(function* () {
    return instrumentKubeApi(yield* KubeApi, yield* Metrics)
  })
)

/** `inner`, instrumented: the usual way to build the KubeApi of a role. */
export const withApiMetrics = <E, R>(inner: Layer.Layer<KubeApi, E, R>): Layer.Layer<KubeApi, E, R | Metrics> =>
  instrumentedKubeApiLayer.pipe(Layer.provide(inner))

const writeVerbs: ReadonlyArray<ApiVerb> = ["create", "update", "patch"]

/**
 * API writes (create, update, patch; any kind, any result) counted so far, read from the metric
 * itself. Benchmarks compare it before and after a scenario.
 */
export const apiWriteCount: Effect.Effect<number, never, Metrics> = Effect.gen(function* () {
  const metrics = yield* Metrics
  let total = 0
  for (const verb of writeVerbs) total += yield* metrics.read("preheat_api_requests_total", { verb })
  return total
})
