/**
 * Container image references, following the docker/distribution reference grammar
 * (github.com/distribution/reference) and its normalisation rules, so that `nginx`,
 * `docker.io/nginx` and `index.docker.io/library/nginx:latest` all name the same image.
 *
 * The parser splits the input into name, tag and digest first and then checks each part
 * on its own. Upstream matches one big regular expression and mostly reports
 * `invalid reference format`; splitting lets us say which part is wrong while accepting
 * and rejecting the same strings.
 */
import { Data, Result } from "effect"
import { quoteBounded } from "./goQuote.ts"

export interface ImageReference {
  readonly domain: string
  readonly path: string
  readonly tag?: string
  readonly digest?: string
}

export class InvalidImageReference extends Data.TaggedError("InvalidImageReference")<{
  readonly reference: string
  readonly reason: string
  readonly message: string
}> {
  constructor(args: { readonly reference: string; readonly reason: string }) {
    // Same wording as the admission messages of SPEC §1, so callers can surface `message`
    // as is; the reference quoted as kube-apiserver quotes a value (%q), and bounded.
    super({
      ...args,
      message: args.reference === "" ? args.reason : invalidImageMessage(args.reference, args.reason)
    })
  }
}

/** `invalid image "<reference>": <reason>` (SPEC §1), the reference escaped and cut as goQuote.ts says. */
const invalidImageMessage = (reference: string, reason: string): string => `invalid image ${quoteBounded(reference)}: ${reason}`

// --- grammar pieces, named after upstream's reference.go ------------------------------

const alphanumeric = "[a-z0-9]+"
const separator = "(?:[._]|__|[-]+)"
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`
export const remoteName = `${pathComponent}(?:/${pathComponent})*`

const domainNameComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
const domainName = `${domainNameComponent}(?:\\.${domainNameComponent})*`
const ipv6Address = "\\[[a-fA-F0-9:]+\\]"
const port = "[0-9]+"
export const domainAndPort = `(?:${domainName}|${ipv6Address})(?::${port})?`

export const tag = "[\\w][\\w.-]{0,127}"
export const digestAlgorithm = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*"
export const digestHex = "[0-9a-fA-F]{32,}"
// A bare 64-hex string is an image ID, not a name: docker refuses it to avoid confusion.
export const identifier = "[a-f0-9]{64}"

const anchored = (pattern: string): RegExp => new RegExp(`^(?:${pattern})$`)

const remoteNameRe = anchored(remoteName)
const domainRe = anchored(domainAndPort)
const tagRe = anchored(tag)
const digestAlgorithmRe = anchored(digestAlgorithm)
const digestHexRe = anchored(digestHex)
const identifierRe = anchored(identifier)
const lowerHexRe = /^[a-f0-9]+$/

const defaultDomain = "docker.io"
const legacyDefaultDomain = "index.docker.io"
const officialRepoPrefix = "library/"
export const nameTotalLengthMax = 255

// Hex lengths of the algorithms go-digest (and so containerd) can verify. Any other
// well-formed algorithm parses grammatically but no runtime could check it.
export const digestHexLength: ReadonlyMap<string, number> = new Map([
  ["sha256", 64],
  ["sha384", 96],
  ["sha512", 128]
])

export const reasons = {
  empty: "image can not be empty",
  format: "invalid reference format",
  identifier: "cannot specify 64-byte hexadecimal strings",
  lowercase: "repository name must be lowercase",
  tooLong: `repository name must not be more than ${nameTotalLengthMax} characters`,
  tag: "invalid tag format",
  digest: "invalid digest format",
  algorithm: "unsupported digest algorithm",
  digestLength: "invalid checksum digest length"
} as const

// Upstream's splitDockerDomain rule: only something that cannot be a repository path
// component (a dot, a port colon, uppercase) or the literal `localhost` is a registry.
const looksLikeDomain = (component: string): boolean =>
  component.includes(".") || component.includes(":") || component === "localhost" || component.toLowerCase() !== component

const splitDomain = (name: string): { readonly domain: string; readonly path: string } => {
  const slash = name.indexOf("/")
  let domain = defaultDomain
  let path = name
  if (slash >= 0 && looksLikeDomain(name.slice(0, slash))) {
    domain = name.slice(0, slash)
    path = name.slice(slash + 1)
  }
  if (domain === legacyDefaultDomain) domain = defaultDomain
  if (domain === defaultDomain && !path.includes("/")) path = officialRepoPrefix + path
  return { domain, path }
}

const checkDigest = (digest: string): string | undefined => {
  const colon = digest.indexOf(":")
  if (colon <= 0 || colon === digest.length - 1) return reasons.digest
  const algorithm = digest.slice(0, colon)
  const hex = digest.slice(colon + 1)
  if (!digestAlgorithmRe.test(algorithm)) return reasons.digest
  const expected = digestHexLength.get(algorithm)
  if (expected === undefined) return digestHexRe.test(hex) ? reasons.algorithm : reasons.digest
  // Length before content, as go-digest does: `sha256:abc` is a truncated digest, and
  // saying so is more useful than "bad format".
  if (hex.length !== expected) return reasons.digestLength
  return lowerHexRe.test(hex) ? undefined : reasons.digest
}

export const parseImageReference = (input: string): Result.Result<ImageReference, InvalidImageReference> => {
  const fail = (reason: string) => Result.fail(new InvalidImageReference({ reference: input, reason }))
  if (input === "") return fail(reasons.empty)
  if (identifierRe.test(input)) return fail(reasons.identifier)

  // Neither a name nor a tag may contain "@", so the first one starts the digest.
  const at = input.indexOf("@")
  const nameAndTag = at < 0 ? input : input.slice(0, at)
  const digest = at < 0 ? undefined : input.slice(at + 1)

  // A colon after the last slash starts the tag; one before it is a registry port.
  const colon = nameAndTag.lastIndexOf(":")
  const hasTag = colon > nameAndTag.lastIndexOf("/")
  const name = hasTag ? nameAndTag.slice(0, colon) : nameAndTag
  const tagPart = hasTag ? nameAndTag.slice(colon + 1) : undefined

  const { domain, path } = splitDomain(name)
  if (!domainRe.test(domain)) return fail(reasons.format)
  if (!remoteNameRe.test(path)) {
    return fail(remoteNameRe.test(path.toLowerCase()) ? reasons.lowercase : reasons.format)
  }
  if (domain.length + 1 + path.length > nameTotalLengthMax) return fail(reasons.tooLong)
  if (tagPart !== undefined && !tagRe.test(tagPart)) return fail(reasons.tag)
  if (digest !== undefined) {
    const problem = checkDigest(digest)
    if (problem !== undefined) return fail(problem)
  }
  return Result.succeed(makeReference(domain, path, tagPart, digest))
}

// exactOptionalPropertyTypes: absent parts are left out rather than set to undefined, so
// parsed references compare equal to hand-written ones.
const makeReference = (domain: string, path: string, tag: string | undefined, digest: string | undefined): ImageReference => ({
  domain,
  path,
  ...(tag === undefined ? {} : { tag }),
  ...(digest === undefined ? {} : { digest })
})

export const formatImageReference = (ref: ImageReference): string =>
  `${ref.domain}/${ref.path}${ref.tag === undefined ? "" : `:${ref.tag}`}${ref.digest === undefined ? "" : `@${ref.digest}`}`

export const familiarName = (ref: ImageReference): string => {
  if (ref.domain !== defaultDomain) return `${ref.domain}/${ref.path}`
  const rest = ref.path.startsWith(officialRepoPrefix) ? ref.path.slice(officialRepoPrefix.length) : undefined
  if (rest !== undefined && !rest.includes("/")) return rest
  // Unlike upstream, keep `docker.io/` when the first path component would otherwise be
  // read back as a registry (`docker.io/foo.bar/x`, `docker.io/localhost/x`): the familiar
  // name is a NodeImage key and must parse back to the same repository.
  const first = ref.path.split("/")[0] ?? ""
  return looksLikeDomain(first) ? `${ref.domain}/${ref.path}` : ref.path
}

export interface NodeImageTask {
  readonly name: string
  readonly tag: string
}

export const toNodeImageTask = (ref: ImageReference): NodeImageTask => ({
  name: familiarName(ref),
  // A digest pins the content, so it is the thing worth pulling even if a tag came along.
  tag: ref.digest ?? ref.tag ?? "latest"
})

export const pullReference = (task: NodeImageTask): string =>
  // Tags cannot contain ":", so a colon means the NodeImage "tag" is really a digest, which
  // the runtime only understands after "@" (SPEC §4 item 1).
  task.tag.includes(":") ? `${task.name}@${task.tag}` : `${task.name}:${task.tag}`

/**
 * Whether two references name the same image. A digest is compared only against a digest:
 * a tag says nothing about which content it currently points to, so a tag-only entry in the
 * runtime's repoTags must not satisfy a digest-pinned IfNotPresent pull, and vice versa.
 * A missing tag means `latest`, as it does for a pull.
 */
export const sameImage = (a: ImageReference, b: ImageReference): boolean => {
  if (a.domain !== b.domain || a.path !== b.path) return false
  if (a.digest !== undefined || b.digest !== undefined) return a.digest === b.digest
  return (a.tag ?? "latest") === (b.tag ?? "latest")
}
