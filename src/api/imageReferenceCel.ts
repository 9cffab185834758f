/**
 * The image reference grammar of imageReference.ts as CRD validation rules, so that a real API
 * server refuses `Nginx:1` at apply time with the decoder's words. The grammar is regular: every
 * step of parseImageReference (split at the first "@" and the tag colon, the registry rule of
 * splitDockerDomain, the length of the normalised name, the digest) becomes a whole-string
 * `matches()` on `self`, in the parser's order, so both report the same first reason.
 *
 * Only RE2 syntax that JavaScript reads the same way: no lookaround, no backreferences, no
 * inline flags; `[\s\S]` for any character (`.` stops at a newline in both).
 */
import { maxQuotedCharacters } from "./goQuote.ts"
import { quoteCel } from "./goQuoteCel.ts"
import type { CelRule } from "./schemaExtras.ts"
import {
  digestAlgorithm,
  digestHex,
  digestHexLength,
  domainAndPort,
  identifier,
  nameTotalLengthMax,
  reasons,
  remoteName,
  tag
} from "./imageReference.ts"

/**
 * The longest image reference the CRDs accept: room for a registry, a long repository path, a tag
 * and a digest, and small enough for a list job's 256 images to stay within the CEL budget.
 */
export const maxImageLength = 256

/** A CEL string literal holding `text` (single quotes; backslashes doubled). */
const literal = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`
const matches = (pattern: string): string => `self.matches(${literal(pattern)})`

const any = "[\\s\\S]"
// What may follow the name: a tag (no ":", "/" or "@") and a digest (anything after the first "@").
const tail = `(?::[^:/@]*)?(?:@${any}*)?$`
// The first component before a "/" is a registry when it has a dot, a colon or an uppercase letter,
// or is localhost (splitDockerDomain); then it must be host[:port].
const firstComponent = "^[^/@]*/"
const hasDomain = matches("^(?:localhost|[^/@]*[.:A-Z][^/@]*)/")
const domainValid = matches(`^(?:${domainAndPort})/`)
const caseInsensitive = (pattern: string): string => pattern.replaceAll("[a-z0-9]", "[a-zA-Z0-9]")
const pathValid = (path: string): string =>
  `(${hasDomain} ? ${matches(`${firstComponent}(?:${path})${tail}`)} : ${matches(`^(?:${path})${tail}`)})`

// Length of the normalised name (docker.io for no or index.docker.io, library/ before a
// one-component Docker Hub path) above the limit. The name ends at the tag colon or the "@".
const longerThan = (limit: number): string => {
  const at = (length: number, namePattern: string): string =>
    `(size(self) >= ${length} && self.substring(0, ${length}).matches(${literal(namePattern)}))`
  const withDomain = "^[^/@]*(?:/[^:@]*)?$"
  const pathHasSlash = matches("^[^/@]*/[^:@/]*/")
  const hub = "docker.io".length + 1
  const library = "library/".length
  const length = (adjust: number) => limit + 1 - adjust
  return (
    `(${hasDomain} ? (` +
    `self.startsWith('index.docker.io/') ? (${pathHasSlash} ? ${at(length(-6), withDomain)} : ${at(length(library - 6), withDomain)}) : ` +
    `self.startsWith('docker.io/') ? (${pathHasSlash} ? ${at(length(0), withDomain)} : ${at(length(library), withDomain)}) : ` +
    `${at(length(0), withDomain)}` +
    `) : (${matches("^[^:@]*/")} ? ${matches(`^[^:@]{${length(hub)}}`)} : ${matches(`^[^:@]{${length(hub + library)}}`)}))`
  )
}

const tagValid = `(${hasDomain} ? ${matches(`${firstComponent}[^:@]*(?::${tag})?(?:@${any}*)?$`)} : ${matches(
  `^[^:@]*(?::${tag})?(?:@${any}*)?$`
)})`

const digestReason = (): string => {
  const afterAt = "^[^@]*@"
  const known = [...digestHexLength]
    .map(
      ([algorithm, length]) =>
        `self.matches(${literal(`${afterAt}${algorithm}:`)}) ? (` +
        `!${matches(`${afterAt}${algorithm}:${any}{${length}}$`)} ? ${literal(reasons.digestLength)} : ` +
        `!${matches(`${afterAt}${algorithm}:[a-f0-9]{${length}}$`)} ? ${literal(reasons.digest)} : '') : `
    )
    .join("")
  return (
    `(!${matches(`${afterAt}(?:${digestAlgorithm}):${any}`)} ? ${literal(reasons.digest)} : ${known}` +
    `${matches(`${afterAt}(?:${digestAlgorithm}):(?:${digestHex})$`)} ? ${literal(reasons.algorithm)} : ${literal(reasons.digest)})`
  )
}

/** Why a non-empty reference is invalid, in the parser's order; '' when it is valid. */
const reason = `${[
  `${matches(`^${identifier}$`)} ? ${literal(reasons.identifier)}`,
  `${hasDomain} && !${domainValid} ? ${literal(reasons.format)}`,
  `!${pathValid(remoteName)} ? (${pathValid(caseInsensitive(remoteName))} ? ${literal(reasons.lowercase)} : ${literal(reasons.format)})`,
  `${longerThan(nameTotalLengthMax)} ? ${literal(reasons.tooLong)}`,
  `!${tagValid} ? ${literal(reasons.tag)}`,
  `!self.contains('@') ? ''`
].join(" : ")} : ${digestReason()}`

/** The rules of an image field: not empty, then a valid reference (SPEC §1 messages). */
export const imageCelRules: ReadonlyArray<CelRule> = [
  { rule: "self != ''", message: reasons.empty },
  // The reference quoted as the decoder's invalidImageMessage quotes it, where CEL can (goQuoteCel.ts).
  {
    rule: `self == '' || (${reason}) == ''`,
    messageExpression: `'invalid image ' + ${quoteCel("self", maxQuotedCharacters)} + ': ' + (${reason})`
  }
]
