import { Effect, Option, Result } from "effect"
import { parseImageReference } from "../api/imageReference.ts"
import { CriRuntime, type ImageInfo } from "../cri/CriRuntime.ts"

/**
 * The manifest digest a reference resolved to, among an image's repo digests (`repo@sha256:...`,
 * as CRI reports them). An image can carry several, one per repository it was pulled from (the
 * same content pushed to two registries, or under two names): only the one of the reference's own
 * repository says what its tag named, with docker.io and library/ normalised. A reference by
 * digest resolved to that digest, whatever else the image carries (of two repo digests in one
 * repository, an index's and its platform manifest's, the one named). Undefined when the runtime
 * reports none for the repository.
 */
export const repoDigestFor = (reference: string, repoDigests: ReadonlyArray<string>): string | undefined => {
  const wanted = parseImageReference(reference)
  if (Result.isFailure(wanted)) return undefined
  const { domain, path, digest } = wanted.success
  if (digest !== undefined) return digest
  for (const name of repoDigests) {
    const parsed = parseImageReference(name)
    if (Result.isFailure(parsed)) continue
    const candidate = parsed.success
    if (candidate.digest !== undefined && candidate.domain === domain && candidate.path === path) return candidate.digest
  }
  return undefined
}

/** The digest of an image already on the node, for `reference`. */
export const digestOf = (reference: string, image: ImageInfo): string | undefined => repoDigestFor(reference, image.repoDigests)

/** The digest a reference names itself (`repo@sha256:...`), if it is by digest. */
const ownDigest = (reference: string): string | undefined => {
  const parsed = parseImageReference(reference)
  return Result.isSuccess(parsed) ? parsed.success.digest : undefined
}

/**
 * What the runtime resolved a pull to. A reference by digest resolved to that digest: nothing to
 * ask. For a tag, the pull's answer is the image id only (CRI's PullImageResponse has nothing
 * else): ImageStatus of that id (the tag may have moved on since, the id has not), then of the
 * reference. The digest is a report, not the pull's outcome: a runtime that cannot answer leaves
 * it out, logged.
 */
export const resolvedDigest = (reference: string, imageId: string): Effect.Effect<string | undefined, never, CriRuntime> =>
  Effect.gen(function* () {
    const own = ownDigest(reference)
    if (own !== undefined) return own
    const cri = yield* CriRuntime
    const byId = yield* cri.imageStatus(imageId)
    const info = Option.isSome(byId) ? byId : yield* cri.imageStatus(reference)
    return Option.isSome(info) ? digestOf(reference, info.value) : undefined
  }).pipe(
    Effect.catch((error) =>
      Effect.as(Effect.logDebug("could not read the pulled image's digest").pipe(Effect.annotateLogs({ failure: error._tag })), undefined)
    )
  )
