// The controller's stores: what each kind is decoded to, and the indexes the reconcilers and the
// change mappings look things up by instead of scanning.
import type { Result } from "effect"
import { decodeAdvancedCronJob, decodeImageListPullJob, decodeImagePullJob } from "../api/decode.ts"
import type { ImageListPullJob } from "../api/imageListPullJob.ts"
import type { ImagePullJob } from "../api/imagePullJob.ts"
import type { InvalidObject } from "../api/invalidObject.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import { alikeObjects } from "../kube/alikeObjects.ts"
import { KeysBy, makeStore } from "../kube/store.ts"
import type { Store, Stored, StoreWriter } from "../kube/store.ts"
import { podPlacement } from "./imagePullJob/targets.ts"
import { nodeImageAsRead } from "./nodeImage/asRead.ts"
import { nodeImageView } from "./nodeImage/view.ts"
import { noScheduleTaintKeys } from "../api/warmTaint.ts"
import { nodeAsRead } from "./nodeFields.ts"
import { OwnerIndex } from "./ownerIndex.ts"

export type Decoded<A> = Result.Result<A, InvalidObject>

/** Object keys by the uids of their owners (any owner reference). */
const byOwner = <A>() =>
  new KeysBy<A>(({ raw }) => (raw.metadata.ownerReferences ?? []).flatMap((o) => (o.uid === undefined ? [] : [o.uid])))
const byUid = <A>() => new KeysBy<A>(({ raw }) => (raw.metadata.uid === undefined ? [] : [raw.metadata.uid]))

/** The controller's stores, empty, each with its writer for the reflector. */
export const controllerStores = () => ({
  jobs: makeStore(resources.imagePullJob, {
    decode: decodeImagePullJob,
    indexes: { uid: byUid<Decoded<ImagePullJob>>(), owner: byOwner<Decoded<ImagePullJob>>() }
  }),
  listJobs: makeStore(resources.imageListPullJob, {
    decode: decodeImageListPullJob,
    indexes: { owner: byOwner<Decoded<ImageListPullJob>>() }
  }),
  cronJobs: makeStore(resources.advancedCronJob, { decode: decodeAdvancedCronJob }),
  secretCopies: makeStore(resources.secret),
  pods: makeStore(resources.pod, { decode: podPlacement }),
  deployments: makeStore(resources.deployment),
  statefulSets: makeStore(resources.statefulSet),
  daemonSets: makeStore(resources.daemonSet),
  replicaSets: makeStore(resources.replicaSet, { indexes: { owner: byOwner<KubeObject>() } }),
  controllerRevisions: makeStore(resources.controllerRevision, { indexes: { owner: byOwner<KubeObject>() } }),
  // Only what is read of a Node (nodeFields.ts), by their NoSchedule taints: the nodes held by the
  // startup taint, found without a scan (nodeWarming/); alike (their labels and Ready conditions).
  nodes: makeStore(resources.node, {
    transform: nodeAsRead,
    indexes: { taints: new KeysBy<KubeObject>(({ raw }) => noScheduleTaintKeys(raw)) },
    alike: alikeObjects()
  }),
  // Its status subresource makes the API server move the generation with every spec change, and
  // only then (the controller's own task writes are tested on it): status reports keep the spec.
  // One per node, alike: the same jobs' tags and the same outcomes are held once, not per node;
  // of their statuses only what is read (nodeImage/asRead.ts), so that outcomes are the same.
  nodeImages: makeStore(resources.nodeImage, {
    transform: nodeImageAsRead,
    decode: nodeImageView,
    indexes: { owners: new OwnerIndex() },
    specFollowsGeneration: true,
    alike: alikeObjects([
      ["spec", "images"],
      ["status", "imageStatuses"]
    ])
  })
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

/**
 * What `owner` controls in its namespace (the controller reference names its uid, so a re-created
 * owner starts afresh), looked up in the store's owner index instead of a scan of the kind.
 */
export const controlledBy = <A>(store: Store<A, { readonly owner: KeysBy<A> }>, owner: KubeObject): Array<Stored<A>> => {
  const uid = owner.metadata.uid
  if (uid === undefined) return []
  const owned: Array<Stored<A>> = []
  for (const key of store.indexes.owner.keys(uid)) {
    const stored = store.entry(key)
    if (stored === undefined || stored.raw.metadata.namespace !== owner.metadata.namespace) continue
    if (stored.raw.metadata.ownerReferences?.some((o) => o.controller === true && o.uid === uid)) owned.push(stored)
  }
  return owned
}
