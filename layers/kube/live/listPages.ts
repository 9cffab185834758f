// A list as one answer, read in pages (`limit`/`continue`) so that neither the server nor this
// process holds a huge response at once. Every page is one request through the rate limiter.
import { Effect, Predicate } from "effect"
import type { Unavailable } from "../../../src/kube/errors.ts"
import type { KubeObject, ListOptions, ObjectList, Refused } from "../../../src/kube/KubeApi.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { collectionPath } from "./paths.ts"
import { asKubeObject, withTypeMeta } from "./objects.ts"
import { kubeErrorOf, narrowTo, type RequestTarget, unavailableOf } from "./statusErrors.ts"
import type { Transport } from "./transport.ts"

const asListError = narrowTo(["Forbidden"])

interface Page {
  readonly items: ReadonlyArray<KubeObject>
  readonly resourceVersion: string
  readonly continueToken: string
}

const stringAt = (record: unknown, key: string): string | undefined => {
  const value = Predicate.isObject(record) ? record[key] : undefined
  return typeof value === "string" ? value : undefined
}

const pageOf = (
  resource: Resource,
  body: unknown,
  target: RequestTarget,
  transform: (object: KubeObject) => KubeObject
): Page | Unavailable => {
  const rawItems = Predicate.isObject(body) ? body["items"] : undefined
  // Go encodes an empty slice as null in some lists.
  if (!Array.isArray(rawItems) && rawItems !== null) return unavailableOf(target, "the answer is not a list")
  const items: Array<KubeObject> = []
  for (const item of rawItems ?? []) {
    const object = asKubeObject(item)
    if (object === undefined) return unavailableOf(target, "a list item is not a Kubernetes object")
    items.push(transform(withTypeMeta(resource, object)))
  }
  const metadata = Predicate.isObject(body) ? body["metadata"] : undefined
  return {
    items,
    resourceVersion: stringAt(metadata, "resourceVersion") ?? "",
    continueToken: stringAt(metadata, "continue") ?? ""
  }
}

/**
 * Every object of the list, at the resourceVersion of its first page (the server keeps pages
 * consistent), each as `options.transform` keeps it, applied page by page.
 */
export const listPages = (
  transport: Transport,
  resource: Resource,
  options: ListOptions,
  pageSize: number
): Effect.Effect<ObjectList, Refused | Unavailable> => {
  const target: RequestTarget = { verb: "list", resource, name: "", namespace: options.namespace }
  const path = collectionPath(resource, options.namespace)
  const transform = options.transform ?? ((object: KubeObject) => object)
  const selectors = {
    labelSelector: options.labelSelector === "" ? undefined : options.labelSelector,
    fieldSelector: options.fieldSelector === "" ? undefined : options.fieldSelector
  }

  // `limit` undefined: one unpaged request, the fallback when a continue token has expired.
  const readAll = (limit: number | undefined): Effect.Effect<ObjectList, Refused | Unavailable | "expired"> =>
    Effect.gen(function* () {
      const items: Array<KubeObject> = []
      let continueToken = ""
      while (true) {
        const answer = yield* transport.send(
          {
            method: "GET",
            path,
            query: {
              ...selectors,
              limit: limit === undefined ? undefined : String(limit),
              continue: continueToken === "" ? undefined : continueToken
            }
          },
          target
        )
        if (answer.status === 410 && continueToken !== "") return yield* Effect.fail("expired" as const)
        if (answer.status < 200 || answer.status >= 300) {
          return yield* Effect.fail(asListError(kubeErrorOf(answer.status, answer.body, target), target))
        }
        const page = pageOf(resource, answer.body, target, transform)
        if (!("items" in page)) return yield* Effect.fail(page)
        items.push(...page.items)
        if (page.continueToken === "") return { items, resourceVersion: page.resourceVersion }
        continueToken = page.continueToken
      }
    })

  // As client-go's pager: when the snapshot behind a continue token is compacted away (410), the
  // whole list is read again in one request rather than stitched from two snapshots.
  return readAll(pageSize).pipe(
    Effect.catch((error) => (error === "expired" ? readAll(undefined) : Effect.fail(error))),
    // Unreachable: an unpaged read has no continue token to expire.
    Effect.mapError((error) => (error === "expired" ? unavailableOf(target, "the list expired twice") : error))
  )
}
