/**
 * goQuote (goQuote.ts) as a CEL expression, for the messageExpressions of the CRD rules that echo a
 * user string: kube-apiserver's CEL has no %q. Within the cost budget CEL can rewrite a few
 * characters (split and join): backslash, double quote, newline, carriage return and tab. So a
 * string of printable ASCII and those three controls is quoted exactly as goQuote quotes it, and
 * any other string is not echoed at all, `(not printable ASCII)` standing in its place: CEL cannot
 * escape a terminal's control sequences, bidi overrides or zero-width characters, and a real API
 * server would hand them to kubectl raw. (The decoder, which runs goQuote, shows such a string
 * escaped; it is the only case where the two messages differ.)
 */
import { ellipsis } from "./goQuote.ts"

/** A CEL string literal (single quotes) holding `text`. */
export const celLiteral = (text: string): string =>
  `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'").replaceAll("\n", "\\n").replaceAll("\r", "\\r").replaceAll("\t", "\\t")}'`

export const notPrintableAscii = "(not printable ASCII)"

const quotable = celLiteral("^[ -~\t\n\r]*$")

const escapes = [
  ["\\", "\\\\"],
  ['"', '\\"'],
  ["\n", "\\n"],
  ["\r", "\\r"],
  ["\t", "\\t"]
]
  .map(([from, to]) => `.split(${celLiteral(from!)}).join(${celLiteral(to!)})`)
  .join("")

const quoted = (s: string): string => `'"' + ${s}${escapes} + '"'`

/**
 * Go's %q of the string `s` (an expression, evaluated more than once), or `(not printable ASCII)`.
 * With `max`, a longer string is cut after `max` characters and followed by `...`, as quoteBounded
 * cuts it (the same text wherever the first `max` characters need no escape): the embedded API
 * server, like a real one, may run the rules of a string its maxLength already refused.
 */
export const quoteCel = (s: string, max?: number): string => {
  const body =
    max === undefined ? quoted(s) : `(size(${s}) <= ${max} ? ${quoted(s)} : ${quoted(`${s}.substring(0, ${max})`)} + '${ellipsis}')`
  return `(${s}.matches(${quotable}) ? ${body} : ${celLiteral(notPrintableAscii)})`
}
