import { evaluate } from "@marcbachmann/cel-js"

/**
 * What a real API server does with a CRD's structural schema, for the kinds' tests:
 * structural defaulting and the x-kubernetes-validations rules, evaluated by a CEL interpreter.
 */
type Node = {
  readonly properties?: Record<string, Node>
  readonly additionalProperties?: Node
  readonly items?: Node
  readonly default?: unknown
  readonly "x-kubernetes-validations"?: ReadonlyArray<{ rule: string; message?: string; messageExpression?: string }>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Defaults apply top-down: a defaulted parent then receives its children's defaults. */
export const applyDefaults = (schema: Node, value: unknown): unknown => {
  if (Array.isArray(value)) return schema.items ? value.map((v) => applyDefaults(schema.items!, v)) : value
  if (!isObject(value)) return value
  const out: Record<string, unknown> = { ...value }
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (out[key] === undefined && child.default !== undefined) out[key] = structuredClone(child.default)
    if (out[key] !== undefined) out[key] = applyDefaults(child, out[key])
  }
  if (schema.additionalProperties) {
    for (const key of Object.keys(out)) out[key] = applyDefaults(schema.additionalProperties, out[key])
  }
  return out
}

/** CEL integers are 64-bit: JSON integers become bigints as the API server's decoder makes them int. */
const toCel = (value: unknown): unknown => {
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map(toCel)
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]))
  return value
}

export interface RuleViolation {
  readonly path: string
  readonly message: string
}

export const celViolations = (schema: Node, value: unknown, path = ""): ReadonlyArray<RuleViolation> => {
  if (value === undefined || value === null) return []
  const own = (schema["x-kubernetes-validations"] ?? []).flatMap((rule) => {
    const self = toCel(value)
    if (evaluate(rule.rule, { self }) === true) return []
    const message = rule.messageExpression !== undefined
      ? String(evaluate(rule.messageExpression, { self }))
      : rule.message ?? `failed rule: ${rule.rule}`
    return [{ path, message }]
  })
  const children: Array<RuleViolation> = []
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => children.push(...celViolations(schema.items!, v, `${path}[${i}]`)))
  } else if (isObject(value)) {
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      children.push(...celViolations(child, value[key], path === "" ? key : `${path}.${key}`))
    }
    if (schema.additionalProperties) {
      for (const [key, v] of Object.entries(value)) {
        children.push(...celViolations(schema.additionalProperties, v, `${path}[${JSON.stringify(key)}]`))
      }
    }
  }
  return [...own, ...children]
}
