// The in-memory KubeApi for tests and benchmarks: the embedded API server's store (harness/apiserver/
// storage/store.ts) served directly through the KubeApi service, without HTTP.
import { Context, Layer } from "effect"
import { makeInMemoryKubeStore } from "../apiserver/storage/store.ts"
import { InMemoryKubeStore } from "../apiserver/storage/store.ts"
import type { InMemoryKubeApiOptions } from "../apiserver/storage/store.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"

export { InMemoryKubeStore } from "../apiserver/storage/store.ts"
export type { InMemoryKubeApiOptions } from "../apiserver/storage/store.ts"

const layerWith = (options: InMemoryKubeApiOptions = {}): Layer.Layer<KubeApi | InMemoryKubeStore> =>
  Layer.syncContext(() => {
    const { api, inspector } = makeInMemoryKubeStore(options)
    return Context.make(KubeApi, api).pipe(Context.add(InMemoryKubeStore, inspector))
  })

export const InMemoryKubeApi = {
  /** A fresh, empty API server each time the layer is built. */
  layer: Layer.syncContext(() => Context.make(KubeApi, makeInMemoryKubeStore().api)),
  /** The same with options, and the store's InMemoryKubeStore handle for tests. */
  layerWith
}
