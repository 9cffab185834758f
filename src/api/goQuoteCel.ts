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

/** A CEL string literal (single quotes) holding `text`. */
export const celLiteral = (text: string): string =>
  `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'").replaceAll("\n", "\\n").replaceAll("\r", "\\r").replaceAll("\t", "\\t")}'`

export const notPrintableAscii = "(not printable ASCII)"

const quotable = celLiteral("^[ -~\t\n\r]*$")

/** Go's %q of the string `s` (an expression, evaluated twice), or `(not printable ASCII)`. */
export const quoteCel = (s: string): string =>
  `(${s}.matches(${quotable}) ? '"' + ${s}` +
  [
    ["\\", "\\\\"],
    ['"', '\\"'],
    ["\n", "\\n"],
    ["\r", "\\r"],
    ["\t", "\\t"]
  ]
    .map(([from, to]) => `.split(${celLiteral(from!)}).join(${celLiteral(to!)})`)
    .join("") +
  ` + '"' : ${celLiteral(notPrintableAscii)})`
