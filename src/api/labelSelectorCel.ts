/**
 * apimachinery's operator and values rules of a label selector's matchExpressions as a CRD rule on
 * the job spec, in the decoder's words (`invalid selector: matchExpressions[0].values: Required
 * value: ...`). The index comes from a literal list of positions, so no list library is needed and
 * the cost is bounded by maxMatchExpressions. Key and value syntax stay with the decoder.
 */
import type { CelRule } from "./schemaExtras.ts"

export const maxMatchExpressions = 64
/** Longer than any operator, so the bound only keeps the API server's cost estimate small. */
export const maxOperatorLength = 64

const quote = (text: string): string => JSON.stringify(text)

const valid = (r: string): string =>
  `(${r}.operator in ['In', 'NotIn'] ? has(${r}.values) && size(${r}.values) > 0 : ` +
  `${r}.operator in ['Exists', 'DoesNotExist'] ? !has(${r}.values) || size(${r}.values) == 0 : false)`

/** The rule for `spec.<field>`, reported as `invalid <field>: ...` at that field. */
export const matchExpressionsRule = (field: "selector" | "podSelector"): CelRule => {
  const list = `self.${field}.matchExpressions`
  const positions = `[${Array.from({ length: maxMatchExpressions }, (_, i) => i).join(", ")}]`
  // has() takes a field of a variable in every evaluator, so validity is mapped over the list first.
  const index = `${positions}.filter(i, i < size(${list}) && !${list}.map(r, ${valid("r")})[i])[0]`
  const bad = `${list}[${index}]`
  return {
    rule: `!has(self.${field}) || !has(${list}) || ${list}.all(r, ${valid("r")})`,
    messageExpression:
      `'invalid ${field}: matchExpressions[' + string(${index}) + ']' + (` +
      `${bad}.operator in ['In', 'NotIn'] ? ${quote(".values: Required value: must be specified when `operator` is 'In' or 'NotIn'")} : ` +
      `${bad}.operator in ['Exists', 'DoesNotExist'] ? ` +
      `${quote(".values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")} : ` +
      `'.operator: Unsupported value: "' + ${bad}.operator + '": supported values: "In", "NotIn", "Exists", "DoesNotExist"')`,
    fieldPath: `.${field}`
  }
}
