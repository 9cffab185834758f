/**
 * apimachinery's label selector validation (what validateLabelSelector in labelSelector.ts reports)
 * as CRD rules on the job spec, in the decoder's words (`invalid selector: matchExpressions[0].values:
 * Required value: ...`, `invalid selector: matchLabels: Invalid value: "bad key!": name part must ...`).
 *
 * Label keys and values are regular languages, so each check is a few RE2 `matches()` on the string.
 * Indexes come from literal lists of positions (no list library needed) and a found index is bound
 * by mapping over a one-element list, so nothing costly is evaluated twice. Sizes are bounded by the
 * schema (maxItems, maxProperties, maxLength below) to keep the API server's cost estimate small;
 * map keys cost nothing there (kube-apiserver sizes a map's keys as its unbounded StringType, 0).
 */
import {
  dns1123SubdomainMaxLength,
  dns1123SubdomainPattern,
  labelSyntaxReasons,
  labelValueMaxLength,
  labelValuePattern,
  qualifiedNameMaxLength,
  qualifiedNamePattern
} from "./objectNames.ts"
import { celLiteral as literal, quoteCel } from "./goQuoteCel.ts"
import type { CelRule } from "./schemaExtras.ts"

export const maxMatchExpressions = 64
/** Longer than any operator, so the bound only keeps the API server's cost estimate small. */
export const maxOperatorLength = 64
/** Bounds for the cost estimate, beyond what selectors written by hand hold. */
export const maxMatchLabels = 64
export const maxRequirementValues = 256
/** The longest valid key: a 253-character prefix, "/" and a 63-character name. */
export const maxLabelKeyLength = dns1123SubdomainMaxLength + 1 + qualifiedNameMaxLength
export const maxLabelValueLength = labelValueMaxLength

const positions = (n: number): string => `[${Array.from({ length: n }, (_, i) => i).join(", ")}]`

const subdomainPrefix = `^(?:${dns1123SubdomainPattern})/`

/** Whether the string `k` (an expression, evaluated several times) is a valid label key. */
const labelKeyValidCel = (k: string): string =>
  `(${k}.matches(${literal(`^(?:(?:${dns1123SubdomainPattern})/)?(?:${qualifiedNamePattern})$`)}) && ` +
  `!${k}.matches(${literal(`^[^/]{${dns1123SubdomainMaxLength + 1}}`)}) && ` +
  `!${k}.matches(${literal(`[^/]{${qualifiedNameMaxLength + 1}}$`)}))`

/**
 * The decoder's first reason for the invalid key `k`, in validateQualifiedName's order. The lengths
 * count characters where the decoder counts UTF-8 bytes; they differ only for keys with non-ASCII
 * characters, which fail the syntax check too, so the reason is still one the decoder gives.
 */
const labelKeyReasonCel = (k: string): string =>
  `(${k}.matches('^[^/]*/[^/]*/') ? ${literal(labelSyntaxReasons.tooManyParts)} : ` +
  `${k}.startsWith('/') ? ${literal(labelSyntaxReasons.prefixEmpty)} : ` +
  `${k}.matches(${literal(`^[^/]{${dns1123SubdomainMaxLength + 1},}/`)}) ? ${literal(labelSyntaxReasons.prefixTooLong)} : ` +
  `${k}.matches('^[^/]*/') && !${k}.matches(${literal(subdomainPrefix)}) ? ${literal(labelSyntaxReasons.prefixSyntax)} : ` +
  `${k} == '' || ${k}.endsWith('/') ? ${literal(labelSyntaxReasons.nameEmpty)} : ` +
  `${k}.matches(${literal(`[^/]{${qualifiedNameMaxLength + 1}}$`)}) ? ${literal(labelSyntaxReasons.nameTooLong)} : ` +
  `${literal(labelSyntaxReasons.nameSyntax)})`

/** Whether the string `v` is a valid label value. */
const labelValueValidCel = (v: string): string =>
  `(size(${v}) <= ${labelValueMaxLength} && ${v}.matches(${literal(`^(?:${labelValuePattern})$`)}))`

/** The decoder's first reason for the invalid value `v` (characters for bytes, as for keys). */
const labelValueReasonCel = (v: string): string =>
  `(size(${v}) > ${labelValueMaxLength} ? ${literal(labelSyntaxReasons.valueTooLong)} : ${literal(labelSyntaxReasons.valueSyntax)})`

type SelectorField = "selector" | "podSelector"

const valid = (r: string): string =>
  `(${r}.operator in ['In', 'NotIn'] ? has(${r}.values) && size(${r}.values) > 0 : ` +
  `${r}.operator in ['Exists', 'DoesNotExist'] ? !has(${r}.values) || size(${r}.values) == 0 : false)`

/** The operator and values rules of `spec.<field>.matchExpressions`, reported as `invalid <field>: ...`. */
const matchExpressionsRule = (field: SelectorField): CelRule => {
  const list = `self.${field}.matchExpressions`
  // has() takes a field of a variable in every evaluator, so validity is mapped over the list first.
  const index = `${positions(maxMatchExpressions)}.filter(i, i < size(${list}) && !${list}.map(r, ${valid("r")})[i])[0]`
  const bad = `${list}[${index}]`
  return {
    rule: `!has(self.${field}) || !has(${list}) || ${list}.all(r, ${valid("r")})`,
    messageExpression:
      `'invalid ${field}: matchExpressions[' + string(${index}) + ']' + (` +
      `${bad}.operator in ['In', 'NotIn'] ? ${literal(".values: Required value: must be specified when `operator` is 'In' or 'NotIn'")} : ` +
      `${bad}.operator in ['Exists', 'DoesNotExist'] ? ` +
      `${literal(".values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")} : ` +
      `'.operator: Unsupported value: ' + ${quoteCel(`${bad}.operator`)} + ': supported values: "In", "NotIn", "Exists", "DoesNotExist"')`,
    fieldPath: `.${field}`
  }
}

/** Key and value syntax of `spec.<field>.matchLabels`. */
const matchLabelsRule = (field: SelectorField): CelRule => {
  const labels = `self.${field}.matchLabels`
  const value = `${labels}[k]`
  const entryValid = `${labelKeyValidCel("k")} && ${labelValueValidCel(value)}`
  const invalid =
    `'invalid ${field}: matchLabels: Invalid value: ' + (${labelKeyValidCel("k")} ? ` +
    `${quoteCel(value)} + ': ' + ${labelValueReasonCel(value)} : ${quoteCel("k")} + ': ' + ${labelKeyReasonCel("k")})`
  return {
    rule: `!has(self.${field}) || !has(${labels}) || ${labels}.all(k, ${entryValid})`,
    // Each entry's message, '' for a valid one; the first non-empty is one the decoder reports.
    messageExpression: `${labels}.map(k, ${entryValid} ? '' : ${invalid}).filter(m, m != '')[0]`,
    fieldPath: `.${field}`
  }
}

/** Key syntax of `spec.<field>.matchExpressions[].key`. */
const matchExpressionKeysRule = (field: SelectorField): CelRule => {
  const list = `self.${field}.matchExpressions`
  const key = `${list}[i].key`
  const index = `${positions(maxMatchExpressions)}.filter(i, i < size(${list}) && !${labelKeyValidCel(key)})[0]`
  return {
    rule: `!has(self.${field}) || !has(${list}) || ${list}.all(r, ${labelKeyValidCel("r.key")})`,
    messageExpression:
      `[${index}].map(i, 'invalid ${field}: matchExpressions[' + string(i) + '].key: Invalid value: ' + ` +
      `${quoteCel(key)} + ': ' + ${labelKeyReasonCel(key)})[0]`,
    fieldPath: `.${field}`
  }
}

/** Value syntax of `spec.<field>.matchExpressions[].values[]`. */
const matchExpressionValuesRule = (field: SelectorField): CelRule => {
  const list = `self.${field}.matchExpressions`
  const values = `${list}[i].values`
  const value = `${values}[j]`
  const requirement = `${positions(maxMatchExpressions)}.filter(i, i < size(${list}) && ${list}.map(r, has(r.values))[i] && !${values}.all(v, ${labelValueValidCel("v")}))[0]`
  const position = `${positions(maxRequirementValues)}.filter(j, j < size(${values}) && !${labelValueValidCel(value)})[0]`
  return {
    rule: `!has(self.${field}) || !has(${list}) || ${list}.all(r, !has(r.values) || r.values.all(v, ${labelValueValidCel("v")}))`,
    messageExpression:
      `[${requirement}].map(i, [${position}].map(j, 'invalid ${field}: matchExpressions[' + string(i) + '].values[' + string(j) + ` +
      `']: Invalid value: ' + ${quoteCel(value)} + ': ' + ${labelValueReasonCel(value)})[0])[0]`,
    fieldPath: `.${field}`
  }
}

/** Every selector rule of a job spec for `spec.<field>`. */
export const labelSelectorRules = (field: SelectorField): ReadonlyArray<CelRule> => [
  matchExpressionsRule(field),
  matchLabelsRule(field),
  matchExpressionKeysRule(field),
  matchExpressionValuesRule(field)
]
