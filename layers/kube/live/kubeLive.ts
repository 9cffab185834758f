// The KubeApi of a real cluster: the kubeconfig read by @kubernetes/client-node 2.x, requests and
// watches over node:http(s) (layers/kube/live/transport.ts) on plain REST paths, not through
// client-node's KubernetesObjectApi: that API has no status subresource, spends a discovery
// request per kind to learn what Resource already says (plural, scope), and opens a new connection
// per request. The list/watch loop is the caller's (src/kube/informer.ts): client-node's informer
// stops for good on errors.
import type { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect, Layer, Random, Stream } from "effect"
import type { Scope } from "effect"
import { ApiAccess } from "../../../src/kube/ApiAccess.ts"
import { withApiMetrics } from "../../../src/kube/instrumentedKubeApi.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, Subresource } from "../../../src/kube/KubeApi.ts"
import { Invalid } from "../../../src/kube/errors.ts"
import type { KubeError, Unavailable } from "../../../src/kube/errors.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { originOf, reportAccess } from "./accessReport.ts"
import { KubeConfigError, type KubeConfigSource, loadKubeConfig, loadKubeConfigFrom } from "./kubeConfig.ts"
import { listPages } from "./listPages.ts"
import { asKubeObject, withTypeMeta } from "./objects.ts"
import { collectionPath, objectPath } from "./paths.ts"
import { makeRateLimiter, type RateLimit } from "./rateLimiter.ts"
import { kubeErrorOf, narrowTo, type RequestTarget, unavailableOf } from "./statusErrors.ts"
import { type HttpRequest, makeTransport } from "./transport.ts"
import { watchStream } from "./watchStream.ts"
import type { Metrics } from "../../../src/ops/metrics.ts"

export interface KubeLiveOptions extends KubeConfigSource, RateLimit {
  readonly userAgent: string
  /** Objects per list page (default 500, as client-go). */
  readonly listPageSize?: number | undefined
  /** How long a request other than a watch may take (default 60 s, the server's own limit). */
  readonly requestTimeout?: Duration.Input | undefined
  /** Retries of one request the client makes itself (429, reads after 5xx or no answer; default 10, as client-go). */
  readonly maxRetries?: number | undefined
}

export { controllerRateLimit } from "./rateLimiter.ts"

// As client-go's reflector: a watch asks the server to end it after 5 to 10 minutes (spreading
// reconnects out), and one silent for a minute longer than that is taken for a dead connection.
const watchTimeoutSeconds = { min: 300, max: 600 }
const watchGraceMillis = 60_000

const mergePatch = "application/merge-patch+json"
const jsonPatch = "application/json-patch+json"

const asReadError = narrowTo(["NotFound", "Forbidden"])
const asCreateError = narrowTo(["AlreadyExists", "Invalid", "Forbidden"])
const asWriteError = narrowTo(["NotFound", "Conflict", "Invalid", "Forbidden"])
const asDeleteError = narrowTo(["NotFound", "Conflict", "Forbidden"])

const targetOf = (
  verb: RequestTarget["verb"],
  resource: Resource,
  name: string,
  namespace: string | undefined,
  subresource?: Subresource
): RequestTarget => ({
  verb,
  resource,
  name,
  namespace: resource.namespaced ? namespace : undefined,
  subresource: subresource === "status" ? "status" : undefined
})

/** What a request's span says about its object; the span's name says the verb. */
const annotateSpan = (target: RequestTarget): Effect.Effect<void> =>
  Effect.annotateCurrentSpan({
    "kube.kind": target.resource.kind,
    ...(target.name === "" ? {} : { "kube.name": target.name }),
    ...(target.namespace === undefined ? {} : { "kube.namespace": target.namespace })
  })

const validate = (options: KubeLiveOptions): Effect.Effect<void, KubeConfigError> => {
  const problems = [
    ...(options.qps > 0 && Number.isFinite(options.qps) ? [] : [`qps must be a positive number, got ${options.qps}`]),
    ...(Number.isInteger(options.burst) && options.burst >= 1 ? [] : [`burst must be a positive integer, got ${options.burst}`]),
    ...(options.listPageSize === undefined || (Number.isInteger(options.listPageSize) && options.listPageSize >= 1)
      ? []
      : [`listPageSize must be a positive integer, got ${options.listPageSize}`])
  ]
  return problems.length === 0 ? Effect.void : Effect.fail(new KubeConfigError({ message: problems.join("; ") }))
}

/** A KubeApi on an already loaded KubeConfig; its connections close with the scope. */
export const makeFromConfig = Effect.fnUntraced(function* (
  config: KubeConfig,
  options: KubeLiveOptions
): Effect.fn.Return<KubeApi["Service"], KubeConfigError, Scope.Scope> {
  yield* validate(options)
  const limiter = makeRateLimiter(options)
  const transport = yield* makeTransport(config, {
    userAgent: options.userAgent,
    limiter,
    requestTimeout: Duration.fromInputUnsafe(options.requestTimeout ?? Duration.seconds(60)),
    maxRetries: options.maxRetries
  }).pipe(Effect.mapError((error) => new KubeConfigError({ message: `cannot use the kubeconfig: ${error.message}` })))
  const pageSize = options.listPageSize ?? 500

  /** The object a successful answer carries, or the error of a failed one, narrowed to the verb's. */
  const send = <E>(
    request: HttpRequest,
    target: RequestTarget,
    narrow: (error: KubeError, target: RequestTarget) => E
  ): Effect.Effect<KubeObject, E | Unavailable> =>
    annotateSpan(target).pipe(
      Effect.andThen(transport.send(request, target)),
      Effect.flatMap((answer): Effect.Effect<KubeObject, E | Unavailable> => {
        if (answer.status < 200 || answer.status >= 300) return Effect.fail(narrow(kubeErrorOf(answer.status, answer.body, target), target))
        const object = asKubeObject(answer.body)
        return object === undefined ? Effect.fail(unavailableOf(target, `HTTP ${answer.status} without an object`)) : Effect.succeed(object)
      })
    )

  const write = (
    verb: "update" | "patch",
    resource: Resource,
    name: string,
    namespace: string | undefined,
    subresource: Subresource | undefined,
    body: unknown
  ) =>
    send(
      {
        method: verb === "update" ? "PUT" : "PATCH",
        path: objectPath(resource, namespace, name, subresource),
        body,
        ...(verb === "patch" ? { contentType: Array.isArray(body) ? jsonPatch : mergePatch } : {})
      },
      targetOf(verb, resource, name, namespace, subresource),
      asWriteError
    )

  // Each verb is a span (named as the method), annotated with the object it concerns.
  return KubeApi.of({
    get: Effect.fn("KubeApi.get")(function* (resource, key) {
      return yield* send(
        { method: "GET", path: objectPath(resource, key.namespace, key.name) },
        targetOf("get", resource, key.name, key.namespace),
        asReadError
      )
    }),

    list: Effect.fn("KubeApi.list")(function* (resource, options = {}) {
      yield* annotateSpan(targetOf("list", resource, "", options.namespace))
      return yield* listPages(transport, resource, options, pageSize)
    }),

    watch: (resource, options) =>
      Stream.unwrap(
        Effect.map(Random.nextIntBetween(watchTimeoutSeconds.min, watchTimeoutSeconds.max, { halfOpen: true }), (timeoutSeconds) =>
          watchStream(
            transport,
            limiter,
            {
              path: collectionPath(resource, options.namespace),
              query: {
                resourceVersion: options.resourceVersion === "" ? undefined : options.resourceVersion,
                allowWatchBookmarks: true,
                labelSelector: options.labelSelector === "" ? undefined : options.labelSelector,
                fieldSelector: options.fieldSelector === "" ? undefined : options.fieldSelector,
                timeoutSeconds
              },
              idleTimeoutMillis: timeoutSeconds * 1000 + watchGraceMillis
            },
            targetOf("watch", resource, "", options.namespace)
          )
        )
      ),

    create: Effect.fn("KubeApi.create")(function* (resource, object) {
      const { name, generateName, namespace } = object.metadata
      const target = targetOf("create", resource, name ?? generateName ?? "", namespace)
      // There is no collection to post to: the same answer as the in-memory server, without a request.
      if (resource.namespaced && (namespace === undefined || namespace === "")) {
        return yield* new Invalid({
          kind: resource.kind,
          objectName: target.name,
          causes: [{ field: "metadata.namespace", message: "Required value" }]
        })
      }
      return yield* send(
        { method: "POST", path: collectionPath(resource, namespace), body: withTypeMeta(resource, object) },
        target,
        asCreateError
      )
    }),

    update: Effect.fn("KubeApi.update")(function* (resource, object, subresource) {
      return yield* write(
        "update",
        resource,
        object.metadata.name ?? "",
        object.metadata.namespace,
        subresource,
        withTypeMeta(resource, object)
      )
    }),

    // The caller's precondition, if any, travels in the patch itself as metadata.resourceVersion.
    patch: Effect.fn("KubeApi.patch")(function* (resource, key, patch, subresource) {
      return yield* write("patch", resource, key.name, key.namespace, subresource, patch)
    }),

    delete: Effect.fn("KubeApi.delete")(function* (resource, key, preconditions) {
      const given = {
        ...(preconditions?.uid === undefined ? {} : { uid: preconditions.uid }),
        ...(preconditions?.resourceVersion === undefined ? {} : { resourceVersion: preconditions.resourceVersion })
      }
      const body = Object.keys(given).length === 0 ? undefined : { apiVersion: "v1", kind: "DeleteOptions", preconditions: given }
      const target = targetOf("delete", resource, key.name, key.namespace)
      yield* annotateSpan(target)
      const answer = yield* transport.send(
        { method: "DELETE", path: objectPath(resource, key.namespace, key.name), ...(body === undefined ? {} : { body }) },
        target
      )
      if (answer.status < 200 || answer.status >= 300) return yield* asDeleteError(kubeErrorOf(answer.status, answer.body, target), target)
      // A 200 carries the object as deleted or still finalizing, or (some built-in kinds) a Status.
      const object = asKubeObject(answer.body)
      return object?.kind === "Status" ? undefined : object
    })
  })
})

/** A KubeApi on the kubeconfig the options point to (see loadKubeConfig for the search order). */
export const make = (options: KubeLiveOptions): Effect.Effect<KubeApi["Service"], KubeConfigError, Scope.Scope> =>
  Effect.flatMap(loadKubeConfig(options), (config) => makeFromConfig(config, options))

/** The live KubeApi telling every request's outcome to the ApiAccess in context. */
const reporting = (options: KubeLiveOptions): Layer.Layer<KubeApi, KubeConfigError, ApiAccess> =>
  Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const { config, from } = yield* loadKubeConfigFrom(options)
      return reportAccess(yield* makeFromConfig(config, options), yield* ApiAccess, originOf(config, from))
    })
  )

export const KubeLive = {
  /** The live KubeApi, counting its requests in preheat_api_requests_total: for commands that run once. */
  layer: (options: KubeLiveOptions): Layer.Layer<KubeApi, KubeConfigError, Metrics> => withApiMetrics(Layer.effect(KubeApi, make(options))),
  /**
   * The live KubeApi of a role, counted, with the ApiAccess that logs what keeps its requests from
   * the server and gives the role's /readyz its `api-access` check.
   */
  layerWithAccess: (options: KubeLiveOptions): Layer.Layer<KubeApi | ApiAccess, KubeConfigError, Metrics> =>
    withApiMetrics(reporting(options)).pipe(Layer.provideMerge(ApiAccess.layer)),
  /** As layerWithAccess, reporting to an ApiAccess provided from outside: several clients, one report. */
  layerReporting: (options: KubeLiveOptions): Layer.Layer<KubeApi, KubeConfigError, Metrics | ApiAccess> =>
    withApiMetrics(reporting(options))
}
