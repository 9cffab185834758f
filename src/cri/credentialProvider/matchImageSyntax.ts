// The kubelet validates each `matchImages` entry by parsing it as a URL (credentialprovider
// ParseSchemelessURL: Go's url.Parse of "https://" + the entry). This says what Go's parser would
// refuse, in its words, so a config the kubelet refuses is refused here too.
import { goQuote } from "../../api/goQuote.ts"

// Go's shouldEscape(c, encodeHost) is false for these: a host name may hold them unescaped.
const hostCharacter = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/
// validUserinfo.
const userinfoCharacter = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]$/
const hexDigit = /^[0-9A-Fa-f]$/

/** Go's unescape: every `%` starts two hex digits; in a host, an escaped ASCII byte other than `%25` is refused too. */
const escapeProblem = (text: string, inHost: boolean): string | undefined => {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? ""
    if (c === "%") {
      const escaped = text.slice(i, i + 3)
      if (!hexDigit.test(text[i + 1] ?? "") || !hexDigit.test(text[i + 2] ?? "")) return `invalid URL escape ${goQuote(escaped)}`
      if (inHost && Number.parseInt(text[i + 1] ?? "", 16) < 8 && escaped !== "%25") return `invalid URL escape ${goQuote(escaped)}`
      i += 2
    } else if (inHost && c.charCodeAt(0) < 0x80 && !hostCharacter.test(c)) {
      return `invalid character ${goQuote(c)} in host name`
    }
  }
  return undefined
}

/** validOptionalPort: nothing, or a colon and digits. */
const validOptionalPort = (port: string): boolean => port === "" || /^:[0-9]*$/.test(port)

/** Go's parseHost, the checks that can fail. */
const hostProblem = (host: string): string | undefined => {
  if (host.startsWith("[")) {
    const close = host.lastIndexOf("]")
    if (close < 0) return "missing ']' in host"
    const colonPort = host.slice(close + 1)
    if (!validOptionalPort(colonPort)) return `invalid port ${goQuote(colonPort)} after host`
  } else {
    const colon = host.lastIndexOf(":")
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) return `invalid port ${goQuote(host.slice(colon))} after host`
  }
  return escapeProblem(host, true)
}

/** Why the kubelet would refuse `pattern` in matchImages, in Go's words (`parse "https://x": ...`); undefined when it would not. */
export const matchImageProblem = (pattern: string): string | undefined => {
  const url = `https://${pattern}`
  const problem = (reason: string) => `parse ${goQuote(url)}: ${reason}`
  if ([...url].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return problem("net/url: invalid control character in URL")
  const hash = url.indexOf("#")
  const beforeFragment = hash < 0 ? url : url.slice(0, hash)
  if (hash >= 0) {
    const fragment = escapeProblem(url.slice(hash + 1), false)
    if (fragment !== undefined) return problem(fragment)
  }
  const question = beforeFragment.indexOf("?")
  const rest = (question < 0 ? beforeFragment : beforeFragment.slice(0, question)).slice("https://".length)
  const slash = rest.indexOf("/")
  const authority = slash < 0 ? rest : rest.slice(0, slash)
  const at = authority.lastIndexOf("@")
  if (at >= 0) {
    const userinfo = authority.slice(0, at)
    if (![...userinfo].every((c) => userinfoCharacter.test(c))) return problem("net/url: invalid userinfo")
    const escapes = escapeProblem(userinfo, false)
    if (escapes !== undefined) return problem(escapes)
  }
  const host = hostProblem(authority.slice(at + 1))
  if (host !== undefined) return problem(host)
  const path = slash < 0 ? undefined : escapeProblem(rest.slice(slash), false)
  return path === undefined ? undefined : problem(path)
}
