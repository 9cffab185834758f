import { Effect } from "effect"
import type { ObjectReference } from "../api/meta.ts"
import { preferredApiVersion } from "../api/references.ts"
import { recordEvent } from "../kube/events.ts"
import type { ObjectEvent } from "../kube/events.ts"
import type { KubeApi, KubeObject } from "../kube/KubeApi.ts"

export const pullSucceededReason = "PullImageSucceed"
export const pullFailedReason = "PullImageFailed"
/** A tag failed because the image filesystem had less room than --min-free-disk (no pull was made). */
export const insufficientDiskReason = "InsufficientDisk"

/** An owner reference as the object an Event is about. */
const ownerObject = (owner: ObjectReference): KubeObject => ({
  apiVersion: owner.apiVersion ?? preferredApiVersion,
  kind: owner.kind ?? "ImagePullJob",
  metadata: {
    name: owner.name ?? "",
    ...(owner.namespace === undefined ? {} : { namespace: owner.namespace }),
    ...(owner.uid === undefined ? {} : { uid: owner.uid })
  }
})

/** The Event of a finished pull, to the NodeImage and to every job that asked for the tag (best-effort). */
export const recordPullEvent = (
  component: string,
  nodeImage: KubeObject | undefined,
  owners: ReadonlyArray<ObjectReference>,
  event: ObjectEvent
): Effect.Effect<void, never, KubeApi> => {
  const record = recordEvent(component)
  const involved = [
    ...(nodeImage === undefined ? [] : [nodeImage]),
    ...owners.filter((owner) => owner.name !== undefined && owner.name !== "").map(ownerObject)
  ]
  return Effect.forEach(involved, (object) => record(object, event), { discard: true })
}
