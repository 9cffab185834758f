// A node whose pull failed keeps its failed tag until the tag's TTL (a day for a Never job): the
// daemon pulls each version of a tag once. When the credentials the job's nodes pull with change
// (a pull secret's copy rotated or fixed, a copy that appeared, a secret added to the job), or a
// node's daemon finds a credential provider answering otherwise than when its pull was refused
// (daemon/providerRenewal/), the nodes that failed before are given their tag again, each once
// per change: pure decisions here, the writes are the job's own (decide.ts).
import { quoteBounded } from "../../api/goQuote.ts"
import type { ReferenceObject } from "../../api/nodeImage.ts"
import { keyOf } from "../../kube/objectKey.ts"

/** The copies a job's task points at that exist, each by a digest of its data: what its nodes pull with, never the data itself. */
export type Credentials = ReadonlyMap<string, string>

/** The credentials of a task's secret references; `digestOf` answers undefined for a copy not (yet) in the store. */
export const credentialsOf = (
  refs: ReadonlyArray<ReferenceObject>,
  digestOf: (ref: ReferenceObject) => string | undefined
): Credentials => {
  const credentials = new Map<string, string>()
  for (const ref of refs) {
    const digest = digestOf(ref)
    if (digest !== undefined) credentials.set(keyOf(ref.namespace, ref.name ?? ""), digest)
  }
  return credentials
}

/**
 * Whether the job's nodes would now pull with something they did not have: a copy whose data
 * changed, or one that is new to the job. A copy that went gives nothing new. Never on the first
 * look (`before` undefined: the job is new, or the controller restarted and cannot tell what the
 * failed pulls used).
 */
export const renewed = (before: Credentials | undefined, after: Credentials): boolean => {
  if (before === undefined) return false
  for (const [key, digest] of after) if (before.get(key) !== digest) return true
  return false
}

/** Failed nodes to give their tag again, each with the version of the tag that failed. */
export type PendingRetries = ReadonlyMap<string, number>

/**
 * The retries still due: a renewal adds every failed node; a node leaves once its tag moved to
 * another version (the retry was written, or the tag was dropped and written anew) or it no
 * longer failed. So a retry that fails again waits for the next renewal.
 */
export const retriesDue = (
  pending: PendingRetries,
  renewal: boolean,
  failed: ReadonlyArray<{ readonly node: string }>,
  versionOf: (node: string) => number | undefined
): PendingRetries => {
  if (!renewal && pending.size === 0) return pending
  const due = new Map<string, number>()
  for (const { node } of failed) {
    const version = versionOf(node)
    if (version === undefined) continue
    if (renewal || pending.get(node) === version) due.set(node, version)
  }
  return due
}

/** A failed target to pull on again, and what changed for it. */
export interface CredentialRetry<Node = string> {
  readonly node: Node
  /** The job's pull secrets changed. */
  readonly secrets: boolean
  /** Credential providers the node's daemon found answering anew, by name. */
  readonly providers: ReadonlyArray<string>
}

/**
 * The failed targets to pull on again, in target order: those due since the pull secrets changed
 * (`secretsDue`), and those whose daemon marked a provider answering anew. The mark stays on the
 * failed tag until it gets its next version, so a node held back by parallelism is still due
 * later, and a controller that restarted meanwhile still sees it.
 */
export const retriesOf = (
  failed: ReadonlyArray<{ readonly node: string; readonly renewedBy: ReadonlyArray<string> }>,
  secretsDue: PendingRetries
): ReadonlyArray<CredentialRetry> =>
  failed.flatMap(({ node, renewedBy }) => {
    const secrets = secretsDue.has(node)
    return secrets || renewedBy.length > 0 ? [{ node, secrets, providers: renewedBy }] : []
  })

/** At most this many providers are named in an event; the status is writable by hand. */
const namedProviders = 3

/** What changed for the retried nodes, for the CredentialsChanged event: `pull secrets`, a provider's answer, or both. */
export const changedCredentials = (retried: ReadonlyArray<CredentialRetry<unknown>>): string => {
  const secrets = retried.some((r) => r.secrets)
  const providers = [...new Set(retried.flatMap((r) => r.providers))].sort()
  if (providers.length === 0) return "pull secrets"
  const named = providers.slice(0, namedProviders).map((p) => quoteBounded(p))
  const more = providers.length - named.length
  const list = `${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`
  const answers = providers.length === 1 ? `the answer of credential provider ${list}` : `the answers of credential providers ${list}`
  return secrets ? `pull secrets and ${answers}` : answers
}
