// metav1.LabelSelector: schema, validation, matching and the query-string form.
// Semantics follow k8s.io/apimachinery so a selector means the same here as in kubectl.
import { Schema } from "effect"
import { goQuote } from "./goQuote.ts"
import {
  maxLabelKeyLength,
  maxLabelValueLength,
  maxMatchExpressions,
  maxMatchLabels,
  maxOperatorLength,
  maxRequirementValues
} from "./labelSelectorCel.ts"
import { validateLabelValue, validateQualifiedName } from "./objectNames.ts"
import { withOpenApi } from "./schemaExtras.ts"

export const labelSelectorOperators = ["In", "NotIn", "Exists", "DoesNotExist"] as const
export type LabelSelectorOperator = (typeof labelSelectorOperators)[number]

export const LabelSelectorRequirement = Schema.Struct({
  key: Schema.String.pipe(withOpenApi({ maxLength: maxLabelKeyLength })).annotate({
    description: "The label key that the selector applies to, e.g. `kubernetes.io/hostname`."
  }),
  // Any string decodes: validateLabelSelector reports an unknown operator with
  // apimachinery's wording instead of a generic decoding error.
  operator: Schema.String.pipe(withOpenApi({ maxLength: maxOperatorLength })).annotate({
    description:
      "How the key relates to the values. One of: In (the label value is one of `values`), " +
      "NotIn (the label is absent or its value is not one of `values`), Exists (the label is present), " +
      "DoesNotExist (the label is absent)."
    // No `examples`: CRD structural schemas reject that keyword; generators use labelSelectorOperators.
  }),
  values: Schema.optionalKey(
    Schema.Array(Schema.String.pipe(withOpenApi({ maxLength: maxLabelValueLength })))
      .pipe(withOpenApi({ maxItems: maxRequirementValues, "x-kubernetes-list-type": "atomic" }))
      .annotate({
        description:
          "Label values to compare against. Required and non-empty when the operator is In or NotIn; " +
          "must be omitted or empty when the operator is Exists or DoesNotExist."
      })
  )
}).annotate({
  description: "One condition on a label: a key, an operator and, for In and NotIn, a set of values."
})
export type LabelSelectorRequirement = typeof LabelSelectorRequirement.Type

export const LabelSelector = Schema.Struct({
  matchLabels: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.String.pipe(withOpenApi({ maxLength: maxLabelValueLength })))
      .pipe(withOpenApi({ maxProperties: maxMatchLabels }))
      .annotate({
        description:
          "Exact label matches: each key/value pair must be present on the object. " +
          "Equivalent to an In requirement with that single value."
      })
  ),
  matchExpressions: Schema.optionalKey(
    Schema.Array(LabelSelectorRequirement)
      .pipe(withOpenApi({ maxItems: maxMatchExpressions, "x-kubernetes-list-type": "atomic" }))
      .annotate({
        description: "Label conditions that must all hold."
      })
  )
}).annotate({
  description:
    "A query over labels. matchLabels and matchExpressions are combined with AND. " + "An empty selector ({}) matches every object."
})
export type LabelSelector = typeof LabelSelector.Type

export const isLabelSelectorOperator = (op: string): op is LabelSelectorOperator =>
  (labelSelectorOperators as ReadonlyArray<string>).includes(op)

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Every reason the selector is invalid, as apimachinery's ValidateLabelSelector words them,
 * each prefixed by the field path inside the selector (e.g. `matchExpressions[0].values: ...`).
 * Empty when valid.
 */
export const validateLabelSelector = (selector: LabelSelector): ReadonlyArray<string> => {
  const errs: Array<string> = []
  // Sorted because Go ranges maps in random order; we want stable messages.
  const labels = Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => compareStrings(a, b))
  for (const [key, value] of labels) {
    for (const msg of validateQualifiedName(key)) errs.push(`matchLabels: Invalid value: ${goQuote(key)}: ${msg}`)
    for (const msg of validateLabelValue(value)) errs.push(`matchLabels: Invalid value: ${goQuote(value)}: ${msg}`)
  }
  ;(selector.matchExpressions ?? []).forEach((req, i) => {
    const path = `matchExpressions[${i}]`
    const values = req.values ?? []
    switch (req.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0) {
          errs.push(`${path}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`)
        }
        break
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) {
          errs.push(`${path}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`)
        }
        break
      default:
        errs.push(
          `${path}.operator: Unsupported value: ${goQuote(req.operator)}: supported values: ` +
            labelSelectorOperators.map((op) => `"${op}"`).join(", ")
        )
    }
    for (const msg of validateQualifiedName(req.key)) errs.push(`${path}.key: Invalid value: ${goQuote(req.key)}: ${msg}`)
    values.forEach((v, j) => {
      for (const msg of validateLabelValue(v)) errs.push(`${path}.values[${j}]: Invalid value: ${goQuote(v)}: ${msg}`)
    })
  })
  return errs
}

// A requirement that fails the structural checks matches nothing: selecting too few nodes
// is recoverable, pulling onto every node because of a typo is not. Validate first anyway.
const matchesRequirement = (req: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean => {
  const values = req.values ?? []
  // Object.hasOwn so that keys like "constructor" are not found on the prototype.
  const present = Object.hasOwn(labels, req.key)
  switch (req.operator) {
    case "In":
      return values.length > 0 && present && values.includes(labels[req.key] ?? "")
    case "NotIn":
      return values.length > 0 && (!present || !values.includes(labels[req.key] ?? ""))
    case "Exists":
      return values.length === 0 && present
    case "DoesNotExist":
      return values.length === 0 && !present
    default:
      return false
  }
}

/** Whether the labels satisfy the selector; `{}` matches everything. */
export const matchesLabelSelector = (selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v) &&
  (selector.matchExpressions ?? []).every((req) => matchesRequirement(req, labels))

const formatRequirement = (req: LabelSelectorRequirement): string => {
  const values = `(${[...(req.values ?? [])].sort(compareStrings).join(",")})`
  switch (req.operator) {
    case "In":
      return `${req.key} in ${values}`
    case "NotIn":
      return `${req.key} notin ${values}`
    case "Exists":
      return req.key
    case "DoesNotExist":
      return `!${req.key}`
    // Never drop an unknown requirement (that would widen the selection): emit something the
    // API server rejects instead. Callers should only format validated selectors.
    default:
      return `${req.key} ${req.operator} ${values}`
  }
}

/**
 * The `labelSelector` query-string form (`a=b,c in (x,y),!d,e`), as `kubectl get -l` accepts.
 * Requirements are sorted by key, values inside `in (...)` sorted, so equal selectors print equally.
 */
export const formatLabelSelector = (selector: LabelSelector): string => {
  const parts: Array<{ key: string; text: string }> = [
    ...Object.entries(selector.matchLabels ?? {}).map(([k, v]) => ({ key: k, text: `${k}=${v}` })),
    ...(selector.matchExpressions ?? []).map((req) => ({ key: req.key, text: formatRequirement(req) }))
  ]
  return parts
    .sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.text, b.text))
    .map((p) => p.text)
    .join(",")
}
