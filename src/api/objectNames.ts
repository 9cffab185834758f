// Kubernetes name and label syntax, with the messages k8s.io/apimachinery's
// util/validation gives, so users see the same wording from us as from kubectl.
// Each validator returns every reason (empty when valid) and never throws.

const dns1123Label = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"

/** Regex source (unanchored) for a lowercase RFC 1123 subdomain, e.g. `example.com`. */
export const dns1123SubdomainPattern = `${dns1123Label}(\\.${dns1123Label})*`

/** Regex source (unanchored) for the name part of a qualified name or a non-empty label value. */
export const qualifiedNamePattern = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

/** Regex source (unanchored) for a label value, which may also be empty. */
export const labelValuePattern = `(${qualifiedNamePattern})?`

export const dns1123SubdomainMaxLength = 253
export const qualifiedNameMaxLength = 63
export const labelValueMaxLength = 63

const anchored = (source: string): RegExp => new RegExp(`^(?:${source})$`)
const dns1123SubdomainRegExp = anchored(dns1123SubdomainPattern)
const qualifiedNameRegExp = anchored(qualifiedNamePattern)
const labelValueRegExp = anchored(labelValuePattern)

// apimachinery measures Go strings, i.e. UTF-8 bytes, not UTF-16 code units.
const utf8Length = (s: string): number => {
  let n = 0
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
  }
  return n
}

const maxLenError = (max: number): string => `must be no more than ${max} characters`
const emptyError = "must be non-empty"

// Mirrors apimachinery's RegexError, including its doubled space before "or".
const regexError = (msg: string, pattern: string, ...examples: ReadonlyArray<string>): string =>
  examples.length === 0
    ? `${msg} (regex used for validation is '${pattern}')`
    : `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${pattern}')`

const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
  "and must start and end with an alphanumeric character"
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " +
  "and must start and end with an alphanumeric character"

const dns1123LabelMaxLength = 63
const dns1123LabelRegExp = anchored(dns1123Label)
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"

/** A lowercase RFC 1123 label: Namespace names (apimachinery's IsDNS1123Label). */
export const validateDns1123Label = (name: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (utf8Length(name) > dns1123LabelMaxLength) errs.push(maxLenError(dns1123LabelMaxLength))
  if (!dns1123LabelRegExp.test(name)) errs.push(regexError(dns1123LabelErrMsg, dns1123Label, "my-name", "123-abc"))
  return errs
}

/** A lowercase RFC 1123 subdomain: object names such as Node and Secret names. */
export const validateDns1123Subdomain = (name: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (utf8Length(name) > dns1123SubdomainMaxLength) errs.push(maxLenError(dns1123SubdomainMaxLength))
  if (!dns1123SubdomainRegExp.test(name)) {
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainPattern, "example.com"))
  }
  return errs
}

/** apimachinery's reasons for an invalid qualified name or label value, shared with the CRD rules. */
export const labelSyntaxReasons = {
  tooManyParts:
    "a qualified name " +
    regexError(qualifiedNameErrMsg, qualifiedNamePattern, "MyName", "my.name", "123-abc") +
    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  prefixEmpty: `prefix part ${emptyError}`,
  prefixTooLong: `prefix part ${maxLenError(dns1123SubdomainMaxLength)}`,
  prefixSyntax: `prefix part ${regexError(dns1123SubdomainErrMsg, dns1123SubdomainPattern, "example.com")}`,
  nameEmpty: `name part ${emptyError}`,
  nameTooLong: `name part ${maxLenError(qualifiedNameMaxLength)}`,
  nameSyntax: `name part ${regexError(qualifiedNameErrMsg, qualifiedNamePattern, "MyName", "my.name", "123-abc")}`,
  valueTooLong: maxLenError(labelValueMaxLength),
  valueSyntax: regexError(labelValueErrMsg, labelValuePattern, "MyValue", "my_value", "12345")
} as const

/** A qualified name (label and annotation keys): `[prefix/]name`, prefix a DNS subdomain. */
export const validateQualifiedName = (key: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  const parts = key.split("/")
  if (parts.length > 2) return [labelSyntaxReasons.tooManyParts]
  const name = parts.length === 2 ? (parts[1] ?? "") : (parts[0] ?? "")
  if (parts.length === 2) {
    const prefix = parts[0] ?? ""
    if (prefix.length === 0) errs.push(labelSyntaxReasons.prefixEmpty)
    else for (const msg of validateDns1123Subdomain(prefix)) errs.push(`prefix part ${msg}`)
  }
  // Like apimachinery, an empty name gets both the emptiness and the syntax message.
  if (name.length === 0) errs.push(labelSyntaxReasons.nameEmpty)
  else if (utf8Length(name) > qualifiedNameMaxLength) errs.push(labelSyntaxReasons.nameTooLong)
  if (!qualifiedNameRegExp.test(name)) errs.push(labelSyntaxReasons.nameSyntax)
  return errs
}

/** A label value: empty, or up to 63 characters of the qualified-name alphabet. */
export const validateLabelValue = (value: string): ReadonlyArray<string> => {
  const errs: Array<string> = []
  if (utf8Length(value) > labelValueMaxLength) errs.push(labelSyntaxReasons.valueTooLong)
  if (!labelValueRegExp.test(value)) errs.push(labelSyntaxReasons.valueSyntax)
  return errs
}
