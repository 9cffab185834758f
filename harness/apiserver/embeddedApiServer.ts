// A whole throwaway API server: a fresh store, the cluster's initial namespaces and the
// definitions of its custom kinds, and the HTTP front (with the namespace lifecycle). What
// `preheat apiserver`, the live client's tests and the local-cluster mode run.
import { Clock, Effect } from "effect"
import type { Scope } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { initialNamespaces } from "./admission/namespaceLifecycle.ts"
import { storeAdmission } from "./admission/storeAdmission.ts"
import { customResourceDefinitions } from "./kindRules.ts"
import { servedDefinitions } from "./servedDefinitions.ts"
import { serveApi } from "./http/server.ts"
import type { ApiServerAddress, ApiServerError, ApiServerOptions } from "./http/server.ts"
import { makeInMemoryKubeStore } from "./storage/store.ts"
import type { InMemoryKubeApiOptions, InMemoryKubeStore } from "./storage/store.ts"

export interface EmbeddedApiServerOptions extends ApiServerOptions, InMemoryKubeApiOptions {}

export interface EmbeddedApiServer extends ApiServerAddress {
  /**
   * The same store without HTTP, behind the same admission (schemas, defaults, CEL rules, the
   * namespace lifecycle): what in-process clients (`preheat dev`'s controller and daemons) use.
   */
  readonly api: KubeApi["Service"]
  readonly store: InMemoryKubeStore["Service"]
}

const seed = Effect.gen(function* () {
  const api = yield* KubeApi
  for (const definition of servedDefinitions(yield* Clock.currentTimeMillis)) {
    yield* api.create(customResourceDefinitions, definition).pipe(Effect.orDie)
  }
  for (const name of initialNamespaces) {
    yield* api
      .create(resources.namespace, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name },
        spec: { finalizers: ["kubernetes"] }
      })
      .pipe(Effect.orDie)
  }
})

export const startEmbeddedApiServer = (
  options: EmbeddedApiServerOptions = {}
): Effect.Effect<EmbeddedApiServer, ApiServerError, Scope.Scope> =>
  Effect.gen(function* () {
    const { api, admitted, inspector } = makeInMemoryKubeStore(options)
    const address = yield* Effect.gen(function* () {
      yield* seed
      return yield* serveApi(options)
    }).pipe(Effect.provideService(KubeApi, api))
    const inProcess = admitted(storeAdmission({ decoderAdmission: options.decoderAdmission ?? false, namespaceLifecycle: true }))
    return { ...address, api: inProcess, store: inspector }
  })
