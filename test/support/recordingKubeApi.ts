// The in-memory API server with every request it is sent written down, in order: for tests that
// assert what a component asks of the API server (which Secrets it lists or watches, how many
// GETs a poll costs, whether a status write comes before a NodeImage write).
import { Context, Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { ListOptions, ObjectKey, Patch, Subresource } from "../../src/kube/KubeApi.ts"
import type { Resource } from "../../src/kube/resources.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"

export interface ApiRequest {
  readonly verb: "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"
  /** The resource's plural, with `/status` for the status subresource. */
  readonly resource: string
  readonly namespace?: string | undefined
  readonly name?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** What a write sent (the object, or the patch). */
  readonly body?: unknown
}

/** The requests sent so far, in order; the test reads it as it goes. */
export class ApiRequests extends Context.Service<ApiRequests, { readonly seen: ReadonlyArray<ApiRequest> }>()("test/ApiRequests") {}

const plural = (resource: Resource, subresource?: Subresource) => (subresource === "status" ? `${resource.plural}/status` : resource.plural)

const listed = (verb: "list" | "watch", resource: Resource, options: ListOptions | undefined): ApiRequest => ({
  verb,
  resource: resource.plural,
  namespace: options?.namespace,
  labelSelector: options?.labelSelector,
  fieldSelector: options?.fieldSelector
})

const keyed = (verb: ApiRequest["verb"], resource: string, key: ObjectKey, body?: unknown): ApiRequest => ({
  verb,
  resource,
  namespace: key.namespace,
  name: key.name,
  ...(body === undefined ? {} : { body })
})

/** The controller harness's services (controllerHarness.ts harnessLayer), with ApiRequests beside them. */
export const recordingHarnessLayer = (): Layer.Layer<KubeApi | ApiRequests | Scheduler> => {
  const seen: Array<ApiRequest> = []
  const recording = Layer.effect(
    KubeApi,
    Effect.gen(function* () {
      const inner = yield* KubeApi
      const note = (request: ApiRequest) => Effect.sync(() => seen.push(request))
      return KubeApi.of({
        ...inner,
        get: (resource, key) => Effect.andThen(note(keyed("get", resource.plural, key)), inner.get(resource, key)),
        list: (resource, options) => Effect.andThen(note(listed("list", resource, options)), inner.list(resource, options)),
        watch: (resource, options) => {
          seen.push(listed("watch", resource, options))
          return inner.watch(resource, options)
        },
        create: (resource, object) =>
          Effect.andThen(
            note(
              keyed("create", resource.plural, { name: object.metadata.name ?? "", namespace: object.metadata.namespace ?? "" }, object)
            ),
            inner.create(resource, object)
          ),
        update: (resource, object, subresource) =>
          Effect.andThen(
            note(
              keyed(
                "update",
                plural(resource, subresource),
                { name: object.metadata.name ?? "", namespace: object.metadata.namespace ?? "" },
                object
              )
            ),
            inner.update(resource, object, subresource)
          ),
        patch: (resource, key, patch: Patch, subresource) =>
          Effect.andThen(note(keyed("patch", plural(resource, subresource), key, patch)), inner.patch(resource, key, patch, subresource)),
        delete: (resource, key, preconditions) =>
          Effect.andThen(note(keyed("delete", resource.plural, key)), inner.delete(resource, key, preconditions))
      })
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layer))
  return Layer.mergeAll(recording, Layer.succeed(ApiRequests, { seen }), SchedulerLive.layer())
}
