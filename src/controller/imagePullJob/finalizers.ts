/** Held until the job's tags are released from every NodeImage (SPEC §2 ImagePullJob 7). */
const releaseFinalizer = "preheat.kruise.io/release-tags"

/**
 * OpenKruise's (apis/apps/defaults/v1alpha1.go ProtectionFinalizer): its ImagePullJob controller
 * puts it on every unfinished job, to release the job's secret copies, and takes it off when the
 * job finishes or goes. After a migration nobody else would take it off: a job that was running
 * then could never be deleted. preheat does that work (its copies' rule, pullSecrets/copies.ts).
 */
const upstreamFinalizer = "apps.kruise.io/deletion-protection"

/** The finalizers of a live job once preheat holds it: its own, upstream's taken over; undefined when they are so already. */
export const heldFinalizers = (finalizers: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (finalizers.includes(releaseFinalizer) && !finalizers.includes(upstreamFinalizer)) return undefined
  return [...finalizers.filter((f) => f !== upstreamFinalizer && f !== releaseFinalizer), releaseFinalizer]
}

/** The finalizers of a going job once its tags are released: neither preheat's nor upstream's; undefined when neither is there. */
export const releasedFinalizers = (finalizers: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (!finalizers.includes(releaseFinalizer) && !finalizers.includes(upstreamFinalizer)) return undefined
  return finalizers.filter((f) => f !== upstreamFinalizer && f !== releaseFinalizer)
}
