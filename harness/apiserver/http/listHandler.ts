import { Clock, Effect } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { ListOptions } from "../../../src/kube/KubeApi.ts"
import { fromKubeError } from "./apiStatus.ts"
import { integerParam, query } from "./apiRequest.ts"
import type { ApiRequest } from "./apiRequest.ts"
import type { ObjectContext } from "./objectContext.ts"
import type { Pager } from "../storage/pagination.ts"
import { listReply } from "./representation.ts"

/** GET on a collection: the selected objects, a page at a time when `limit` is given. */
export const listObjects = (context: ObjectContext, request: ApiRequest, options: ListOptions, pager: Pager) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const limit = yield* integerParam(request, "limit")
    const token = yield* Effect.fromResult(pager.parse(query(request, "continue")))
    const current = yield* api.list(context.kind.resource, options).pipe(Effect.mapError((e) => fromKubeError(context.kind, e)))
    const now = yield* Clock.currentTimeMillis
    const page = yield* Effect.fromResult(pager.page(current, limit, token, now))
    return listReply(context.kind, page.items, page, context.representation, { now, include: context.include })
  })
