// The controller's stores: what each kind is decoded to, and the indexes the reconcilers and the
// change mappings look things up by instead of scanning.
import type { Result } from "effect"
import type { AdvancedCronJob } from "../api/advancedCronJob.ts"
import { decodeAdvancedCronJob, decodeImageListPullJob, decodeImagePullJob } from "../api/decode.ts"
import type { ImageListPullJob } from "../api/imageListPullJob.ts"
import type { ImagePullJob } from "../api/imagePullJob.ts"
import type { InvalidObject } from "../api/invalidObject.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import { KeysBy, makeStore } from "../kube/store.ts"
import type { Store, StoreWriter } from "../kube/store.ts"
import { nodeImageView } from "./nodeImage/view.ts"
import { OwnerIndex } from "./ownerIndex.ts"

export type Decoded<A> = Result.Result<A, InvalidObject>

/** Object keys by the uids of their owners (any owner reference). */
const byOwner = <A>() =>
  new KeysBy<A>(({ raw }) => (raw.metadata.ownerReferences ?? []).flatMap((o) => (o.uid === undefined ? [] : [o.uid])))
const byUid = <A>() => new KeysBy<A>(({ raw }) => (raw.metadata.uid === undefined ? [] : [raw.metadata.uid]))

/** The controller's stores, empty, each with its writer for the reflector. */
export const controllerStores = () => ({
  jobs: makeStore(resources.imagePullJob, {
    decode: decodeImagePullJob as (raw: KubeObject) => Decoded<ImagePullJob>,
    indexes: { uid: byUid<Decoded<ImagePullJob>>(), owner: byOwner<Decoded<ImagePullJob>>() }
  }),
  listJobs: makeStore(resources.imageListPullJob, { decode: decodeImageListPullJob as (raw: KubeObject) => Decoded<ImageListPullJob> }),
  cronJobs: makeStore(resources.advancedCronJob, { decode: decodeAdvancedCronJob as (raw: KubeObject) => Decoded<AdvancedCronJob> }),
  secretCopies: makeStore(resources.secret),
  pods: makeStore(resources.pod),
  deployments: makeStore(resources.deployment),
  statefulSets: makeStore(resources.statefulSet),
  daemonSets: makeStore(resources.daemonSet),
  replicaSets: makeStore(resources.replicaSet, { indexes: { owner: byOwner<KubeObject>() } }),
  controllerRevisions: makeStore(resources.controllerRevision, { indexes: { owner: byOwner<KubeObject>() } }),
  nodes: makeStore(resources.node),
  nodeImages: makeStore(resources.nodeImage, { decode: nodeImageView, indexes: { owners: new OwnerIndex() } })
})

type Writers = ReturnType<typeof controllerStores>

/** The stores as the reconcilers and mappings read them. */
export type ControllerStores = { readonly [K in keyof Writers]: Writers[K] extends StoreWriter<infer A, infer I> ? Store<A, I> : never }

export type JobStore = ControllerStores["jobs"]
export type NodeImageStore = ControllerStores["nodeImages"]

/** The key of the ImagePullJob with this uid, if the store has it. */
export const jobKeyOf = (jobs: JobStore, uid: string): string | undefined => {
  for (const key of jobs.indexes.uid.keys(uid)) return key
  return undefined
}

/** The objects in `store` whose owner references name `uid`. */
export const ownedBy = <A>(store: Store<A, { readonly owner: KeysBy<A> }>, uid: string): Array<KubeObject> =>
  [...store.indexes.owner.keys(uid)].flatMap((key) => {
    const object = store.get(key)
    return object === undefined ? [] : [object]
  })
