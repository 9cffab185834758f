import { Effect } from "effect"
import type { ObjectReference } from "../api/meta.ts"
import { preferredApiVersion } from "../api/references.ts"
import { recordEvent } from "../kube/events.ts"
import type { ObjectEvent } from "../kube/events.ts"
import type { KubeApi, KubeObject } from "../kube/KubeApi.ts"
import type { PullResult } from "./pullWorker.ts"

const pullFailedReason = "PullImageFailed"
/** A tag failed unauthorized after a credential provider failed for its image (the message names it). */
export const credentialProviderFailedReason = "CredentialProviderFailed"
/** A tag failed because the image filesystem had less room than --min-free-disk (no pull was made). */
export const insufficientDiskReason = "InsufficientDisk"

/**
 * The Event a finished pull records, if any. A failure is a Warning to the NodeImage and its
 * owners, as upstream's daemon sends it. A success records none: the NodeImage's tag status says it
 * (phase, completionTime, the message), and the job's own events say it once per job (Started,
 * Completed, the share of nodes pulled: src/controller/imagePullJob/decide.ts). Upstream recorded
 * PullImageSucceed on the NodeImage for every pull, and this daemon on the owning jobs too: one
 * or two Events per node and job, the largest part of a rollout's API requests (a job on 5,000
 * nodes made 10,000 Events; docs/benchmarks.md, "Success in status, not in Events").
 */
export const pullEventOf = (result: PullResult): ObjectEvent | undefined =>
  result.succeeded ? undefined : { type: "Warning", reason: result.reason ?? pullFailedReason, message: result.message }

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
