// The in-memory KubeApi for tests and benchmarks: the embedded API server's store (harness/apiserver/
// storage/store.ts) served directly through the KubeApi service, without HTTP, behind the same
// admission as the server's HTTP front (harness/apiserver/admission/storeAdmission.ts) unless told
// otherwise.
import { Context, Layer } from "effect"
import { storeAdmission } from "../apiserver/admission/storeAdmission.ts"
import { makeInMemoryKubeStore } from "../apiserver/storage/store.ts"
import { InMemoryKubeStore } from "../apiserver/storage/store.ts"
import type { InMemoryKubeApiOptions as StoreOptions } from "../apiserver/storage/store.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"

export { InMemoryKubeStore } from "../apiserver/storage/store.ts"

export interface InMemoryKubeApiOptions extends StoreOptions {
  /**
   * Whether writes pass the API server's admission: the CRDs' schemas (unknown fields dropped,
   * defaults), their CEL rules, metadata and workload validation, Secret and Namespace defaults;
   * refused writes fail as Invalid, as a real server answers them. Default true. Namespaces are not
   * required to exist (these tests create objects in namespaces nobody created), and nothing here
   * empties a deleted one: a Namespace keeps the `kubernetes` finalizer its admission gives it.
   */
  readonly admission?: boolean
}

const admission = storeAdmission({ decoderAdmission: false, namespaceLifecycle: false })

const make = (options: InMemoryKubeApiOptions) => {
  const store = makeInMemoryKubeStore(options)
  return { api: options.admission === false ? store.api : store.admitted(admission), inspector: store.inspector }
}

const layerWith = (options: InMemoryKubeApiOptions = {}): Layer.Layer<KubeApi | InMemoryKubeStore> =>
  Layer.syncContext(() => {
    const { api, inspector } = make(options)
    return Context.make(KubeApi, api).pipe(Context.add(InMemoryKubeStore, inspector))
  })

export const InMemoryKubeApi = {
  /** A fresh, empty API server each time the layer is built. */
  layer: Layer.syncContext(() => Context.make(KubeApi, make({}).api)),
  /** The same with options, and the store's InMemoryKubeStore handle for tests. */
  layerWith
}
