/**
 * Go's strconv.Quote (what `%q` prints), as kube-apiserver quotes a value in a field error, for
 * every user string this project echoes in an admission error, a status message, a condition, an
 * event, a log line or the CLI. A reference holding `ESC ] 0 ; ... BEL`, a bidi override or a
 * zero-width character then reaches a terminal as visible escapes, never as a control sequence or
 * as reordered text; and a bounded form keeps a 5,000-character value from being echoed whole.
 *
 * Differences from Go, where JavaScript strings are not Go strings:
 * - A lone UTF-16 surrogate (a string no UTF-8 text can hold) is written `\ufffd`: what Go writes
 *   for a rune that is not a valid character (appendEscapedRune's `!utf8.ValidRune` case), and
 *   what the surrogate becomes anyway once the text is encoded as UTF-8. The result is still a
 *   valid Go string literal, and it differs from a real U+FFFD, which is printable and kept as is.
 * - "Printable" is Go's unicode.IsPrint (letters, marks, numbers, punctuation, symbols and the
 *   ASCII space) over the Unicode tables of this runtime rather than Go's: they differ only for
 *   characters assigned in the latest Unicode versions.
 */

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u

/** Go's unicode.IsPrint for one character (a code point, or a lone surrogate: not printable). */
export const isPrintable = (character: string): boolean => printable.test(character)
// Printable ASCII with nothing to escape: most values, which then need no per-character work.
const plainAscii = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const plainAsciiText = /^[\x20-\x7e]*$/

const named: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v"
}

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, "0")

/** One character (a code point, or a lone surrogate) as Go's appendEscapedRune writes it. */
const escapeCharacter = (character: string, quoted: boolean): string => {
  if (quoted && (character === '"' || character === "\\")) return `\\${character}`
  if (printable.test(character)) return character
  const name = named[character]
  if (name !== undefined) return name
  const code = character.codePointAt(0) ?? 0
  if (code < 0x20 || code === 0x7f) return `\\x${hex(code, 2)}`
  if (code >= 0xd800 && code <= 0xdfff) return "\\ufffd"
  return code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`
}

/** Go's strconv.Quote: the value in double quotes, with `"`, `\` and every non-printable character escaped. */
export const goQuote = (value: string): string => {
  if (plainAscii.test(value)) return `"${value}"`
  let out = '"'
  for (const character of value) out += escapeCharacter(character, true)
  return `${out}"`
}

/**
 * The most characters of a value shown between the quotes of a bounded quote: room for any image
 * reference the CRDs accept (maxImageLength), so only values no schema would take are cut.
 */
export const maxQuotedCharacters = 256

/**
 * The most characters of a foreign message (a container runtime's error, an API server's reply)
 * echoed in a status message or an event: a whole runtime error, which may quote a long reference
 * twice, fits; the note of an events.k8s.io Event holds 1024 bytes at most.
 */
export const maxForeignCharacters = 1024

export const ellipsis = "..."

/**
 * `value`'s characters, escaped one by one, cut after `max` characters of output (an escape counts
 * its own length; a printable character, even outside the BMP, counts one). A cut never falls
 * inside an escape or between the halves of a surrogate pair.
 */
const escapedPrefix = (value: string, max: number, quoted: boolean): { readonly text: string; readonly cut: boolean } => {
  let text = ""
  let used = 0
  for (const character of value) {
    const piece = escapeCharacter(character, quoted)
    const length = piece === character ? 1 : piece.length
    if (used + length > max) return { text, cut: true }
    text += piece
    used += length
  }
  return { text, cut: false }
}

/**
 * goQuote, cut to `max` characters between the quotes (default maxQuotedCharacters). A cut value
 * ends with the closing quote and then `...`, so the quoted part is always an exact prefix of the
 * value and the ellipsis cannot be mistaken for the value's own dots: `"aaaa"...`.
 */
export const quoteBounded = (value: string, max: number = maxQuotedCharacters): string => {
  if (value.length <= max && plainAscii.test(value)) return `"${value}"`
  const { text, cut } = escapedPrefix(value, max, true)
  return cut ? `"${text}"${ellipsis}` : `"${text}"`
}

/** Text of several lines (a cause, a report) with every line escaped as escapeForeignText does, none cut. */
export const escapeForeignLines = (text: string): string =>
  text
    .split("\n")
    .map((line) => escapeForeignText(line, Number.POSITIVE_INFINITY))
    .join("\n")

/**
 * A foreign message (a runtime's or server's error text, which may quote a hostile reference raw)
 * made safe to echo: its non-printable characters escaped as goQuote does, its quotes and
 * backslashes kept (the text is not wrapped in quotes), cut to `max` characters with `...`.
 */
export const escapeForeignText = (text: string, max: number = maxForeignCharacters): string => {
  if (text.length <= max && plainAsciiText.test(text)) return text
  const { text: prefix, cut } = escapedPrefix(text, max, false)
  return cut ? `${prefix}${ellipsis}` : prefix
}
