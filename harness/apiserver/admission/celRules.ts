// The CRDs' x-kubernetes-validations rules, evaluated as kube-apiserver does: each rule on the
// value of its schema node as `self`, its failure reported at that node's path.
import { parse } from "@marcbachmann/cel-js"
import type { ParseResult } from "@marcbachmann/cel-js"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { servedKinds } from "../catalog.ts"
import { childPath, childSchemas, storedChild, storedItem, unchanged } from "./structuralSchema.ts"
import type { StructuralSchema } from "./structuralSchema.ts"

/** CEL integers are 64-bit: JSON integers become bigints as the API server's decoder makes them int. */
const toCel = (value: unknown): unknown => {
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map(toCel)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]))
  return value
}

/** Every rule and message expression of a schema and the schemas under it. */
const expressionsOf = (schema: StructuralSchema): ReadonlyArray<string> => [
  ...(schema["x-kubernetes-validations"] ?? []).flatMap((rule) =>
    rule.messageExpression === undefined ? [rule.rule] : [rule.rule, rule.messageExpression]
  ),
  ...childSchemas(schema).flatMap(expressionsOf)
]

// The served kinds' rules are few and fixed (the CRDs'), and parsing costs more than evaluating:
// each is parsed once, with the catalog. Any other expression is parsed where it is evaluated (and
// one that does not parse fails there, as a rule evaluation error).
const parsed = (expression: string): ReadonlyArray<readonly [string, ParseResult]> => {
  try {
    return [[expression, parse(expression)]]
  } catch {
    return []
  }
}
const compiled: ReadonlyMap<string, ParseResult> = new Map(
  servedKinds.flatMap((kind) => (kind.structural === undefined ? [] : expressionsOf(kind.structural))).flatMap(parsed)
)
const compile = (expression: string): ParseResult => compiled.get(expression) ?? parse(expression)

export interface RuleViolation {
  readonly path: string
  /** The rule's message (or its messageExpression's value), as the API server reports it. */
  readonly message: string
  /** The schema type at the path, which the API server shows as the invalid value. */
  readonly type: string
}

const schemaType = (schema: StructuralSchema): string => schema.type ?? ""

/** Every rule that fails on `value`, children after their parent. A rule that cannot be evaluated fails. */
export const celViolations = (schema: StructuralSchema, value: unknown, path = "", old?: unknown): ReadonlyArray<RuleViolation> => {
  // An unchanged value passed its rules when it was stored (see storedChild): ratcheted, not evaluated again.
  if (value === undefined || value === null || unchanged(value, old)) return []
  const rules = schema["x-kubernetes-validations"] ?? []
  // Converted once for all the node's rules: the NodeImage image map has five, over every image.
  const self = rules.length === 0 ? undefined : toCel(value)
  const own = rules.flatMap((rule): Array<RuleViolation> => {
    let passed: unknown
    try {
      passed = compile(rule.rule)({ self })
    } catch (error) {
      return [{ path, type: schemaType(schema), message: `rule evaluation error: ${(error as Error).message}` }]
    }
    if (passed === true) return []
    let message = rule.message ?? `failed rule: ${rule.rule}`
    if (rule.messageExpression !== undefined) {
      try {
        message = String(compile(rule.messageExpression)({ self }))
      } catch {
        // As kube-apiserver: a messageExpression that fails falls back to the message (or the rule).
      }
    }
    // As kube-apiserver: fieldPath (".field" under this node) names where the error is reported.
    return [{ path: rule.fieldPath === undefined ? path : `${path}${rule.fieldPath}`, type: schemaType(schema), message }]
  })
  const children: Array<RuleViolation> = []
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => {
      children.push(...celViolations(schema.items!, v, `${path}[${i}]`, storedItem(old, i)))
    })
  } else if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      children.push(...celViolations(child, value[key], childPath(path, key), storedChild(old, key)))
    }
    if (typeof schema.additionalProperties === "object") {
      for (const [key, v] of Object.entries(value)) {
        children.push(...celViolations(schema.additionalProperties, v, `${path}[${key}]`, storedChild(old, key)))
      }
    }
  }
  return [...own, ...children]
}
