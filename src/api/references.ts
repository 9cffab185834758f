import { group } from "./meta.ts"
import { type ApiVersionName, apiVersions } from "./schemaExtras.ts"

/**
 * How references to preheat's kinds name their version. Apart from the CRD generator
 * (crd/manifests.ts) on purpose: the daemon names jobs in its Events, and importing the generator
 * brought the YAML library and every kind's schema into the daemon's memory (issue 29).
 */

/** The version every kind is stored in: the newest one, as upstream's CRDs say (storage: true). */
export const storageVersion: ApiVersionName = apiVersions.at(-1)!

/** The apiVersion references to any of preheat's kinds name (referenceApiVersion). */
export const preferredApiVersion = `${group}/${storageVersion}`

/** The kinds the CRDs define (a test holds this to crd/manifests.ts's `kinds`). */
export const preheatKinds: ReadonlyArray<string> = ["ImagePullJob", "ImageListPullJob", "NodeImage", "AdvancedCronJob"]

/**
 * The apiVersion a reference to an object names (an Event's involvedObject, an ownerReference, a
 * status reference): for preheat's kinds the newest served (and stored) version, which kube-apiserver's
 * discovery prefers and kubectl resolves the kind to (`kubectl events --for imagepulljob/NAME`
 * selects `involvedObject.apiVersion` by it, so an Event naming another version is never found).
 * Objects of other groups keep the apiVersion they were read in. Readers of references match the
 * group and kind (or the uid), never the version: references written before name v1alpha1.
 */
export const referenceApiVersion = (kind: string | undefined, apiVersion: string | undefined): string | undefined => {
  if (!apiVersion?.startsWith(`${group}/`)) return apiVersion
  return kind !== undefined && preheatKinds.includes(kind) ? preferredApiVersion : apiVersion
}
