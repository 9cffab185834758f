// From a request to its reply: the route, then discovery, OpenAPI, or a resource handler.
import type { EncodedJson } from "./encodedJson.ts"
import { Effect } from "effect"
import type { KubeApi } from "../../../src/kube/KubeApi.ts"
import { answerReview } from "./accessReviews.ts"
import { parseFieldValidation } from "../admission/admission.ts"
import { badRequest, methodNotAllowed, notAcceptable, pathNotFound } from "./apiStatus.ts"
import type { ApiFailure } from "./apiStatus.ts"
import { listOptions, query } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions } from "./discovery.ts"
import { listObjects } from "./listHandler.ts"
import { aggregatedDiscoveryType, negotiateResource, wantsAggregatedDiscovery } from "./negotiation.ts"
import { deleteCollection, deleteObject } from "./deleteHandlers.ts"
import { isWatch } from "./objectContext.ts"
import type { ObjectContext } from "./objectContext.ts"
import { createObject, finalizeNamespace, getObject, updateObject } from "./objectHandlers.ts"
import type { OpenApiDocuments } from "./openApiDocuments.ts"
import { patchObject } from "../patches/patchHandler.ts"
import type { Pager } from "../storage/pagination.ts"
import { failureReply, jsonReply, textReply } from "./reply.ts"
import type { Reply } from "./reply.ts"
import { routeOf } from "./requestRoute.ts"
import type { Route } from "./requestRoute.ts"
import { kubernetesVersion } from "./serverVersion.ts"
import { parseIncludeObject } from "../tables/table.ts"
import { watchObjects } from "./watchHandler.ts"

export interface DispatchSettings {
  readonly pager: Pager
  readonly decoderAdmission: boolean
  /** host:port, which /api reports as the address to reach this server. */
  readonly serverAddress: string
  /** This server's /openapi/v3 documents. */
  readonly openApi: OpenApiDocuments
  /** The JSON text of the versions it sends, made once each. */
  readonly json: EncodedJson
}

type ResourceRoute = Extract<Route, { readonly _tag: "Resource" }>

const resource = (settings: DispatchSettings, request: ApiRequest, route: ResourceRoute): Effect.Effect<Reply, ApiFailure, KubeApi> =>
  Effect.gen(function* () {
    const { kind, namespace, name, subresource } = route
    const collection = name === undefined
    const representation = negotiateResource(request.accept, collection && request.method === "GET" && !isWatch(request, route.watchPrefix))
    if (representation === undefined) return yield* Effect.fail(notAcceptable())
    const include = parseIncludeObject(query(request, "includeObject"))
    if (include === undefined)
      return yield* Effect.fail(badRequest(`includeObject: Invalid value: ${JSON.stringify(query(request, "includeObject"))}`))
    const fieldValidation = parseFieldValidation(query(request, "fieldValidation"))
    if (fieldValidation === undefined) {
      return yield* Effect.fail(
        badRequest(
          `fieldValidation: Unsupported value: ${JSON.stringify(query(request, "fieldValidation"))}: supported values: "Ignore", "Strict", "Warn"`
        )
      )
    }
    const context: ObjectContext = {
      kind,
      namespace,
      representation,
      include,
      fieldValidation,
      decoderAdmission: settings.decoderAdmission,
      json: settings.json
    }
    const scoped = !kind.resource.namespaced || namespace !== undefined
    if (collection) {
      switch (request.method) {
        case "GET": {
          const options = yield* listOptions(request, kind, namespace)
          return yield* isWatch(request, route.watchPrefix)
            ? watchObjects(context, request, options)
            : listObjects(context, request, options, settings.pager)
        }
        case "POST":
          return yield* scoped ? createObject(context, request) : Effect.fail(pathNotFound())
        case "DELETE":
          return yield* deleteCollection(context, request, yield* listOptions(request, kind, namespace))
        default:
          return yield* Effect.fail(methodNotAllowed(request.method))
      }
    }
    if (!scoped) return yield* Effect.fail(pathNotFound())
    if (subresource === "finalize") {
      return yield* request.method === "PUT" ? finalizeNamespace(context, request, name) : Effect.fail(methodNotAllowed(request.method))
    }
    const part = subresource === "status" ? "status" : "main"
    switch (request.method) {
      case "GET":
        return yield* isWatch(request, route.watchPrefix)
          ? Effect.flatMap(listOptions(request, kind, namespace, name), (options) => watchObjects(context, request, options))
          : getObject(context, name)
      case "PUT":
        return yield* updateObject(context, request, name, part)
      case "PATCH":
        return yield* patchObject(context, request, name, part)
      case "DELETE":
        if (subresource !== undefined) return yield* Effect.fail(methodNotAllowed(request.method))
        return yield* deleteObject(context, request, name)
      default:
        return yield* Effect.fail(methodNotAllowed(request.method))
    }
  })

const discovery = (settings: DispatchSettings, request: ApiRequest, route: Route): Reply | undefined => {
  const aggregated = wantsAggregatedDiscovery(request.accept)
  const headers = { vary: "Accept" }
  switch (route._tag) {
    case "Version":
      return jsonReply(200, kubernetesVersion)
    case "ApiVersions":
      return aggregated
        ? jsonReply(200, aggregatedDiscovery(true), { contentType: aggregatedDiscoveryType, headers })
        : jsonReply(200, apiVersions(settings.serverAddress), { headers })
    case "GroupList":
      return aggregated
        ? jsonReply(200, aggregatedDiscovery(false), { contentType: aggregatedDiscoveryType, headers })
        : jsonReply(200, apiGroupList(), { headers })
    case "Group": {
      const group = apiGroup(route.group)
      return group === undefined ? failureReply(pathNotFound()) : jsonReply(200, group)
    }
    case "ResourceList": {
      const list = apiResourceList(route.group, route.version)
      return list === undefined ? failureReply(pathNotFound()) : jsonReply(200, list)
    }
    case "OpenApiRoot":
      return jsonReply(200, settings.openApi.root())
    case "OpenApiDocument": {
      const document = settings.openApi.document(route.path)
      if (document === undefined) return failureReply(pathNotFound())
      // A document asked for by its hash never changes: clients may cache it for good.
      const cache = request.url.searchParams.get("hash") === document.hash ? "public, immutable" : "no-cache, private"
      return {
        _tag: "Body",
        status: 200,
        contentType: "application/json",
        body: document.body,
        headers: { etag: `"${document.hash}"`, "cache-control": cache }
      }
    }
    default:
      return undefined
  }
}

export const dispatch = (settings: DispatchSettings, request: ApiRequest): Effect.Effect<Reply, never, KubeApi> => {
  const route = routeOf(request.url.pathname)
  if (route._tag === "Resource")
    return resource(settings, request, route).pipe(Effect.catch((failure) => Effect.succeed(failureReply(failure))))
  if (route._tag === "NotFound") return Effect.succeed(failureReply(pathNotFound()))
  if (route._tag === "Review")
    return answerReview(route.review, request).pipe(Effect.catch((failure) => Effect.succeed(failureReply(failure))))
  if (request.method !== "GET" && request.method !== "HEAD") return Effect.succeed(failureReply(methodNotAllowed(request.method)))
  if (route._tag === "Health") return Effect.succeed(textReply(200, "ok"))
  return Effect.succeed(discovery(settings, request, route) ?? failureReply(pathNotFound()))
}
