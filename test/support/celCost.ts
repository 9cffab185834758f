/**
 * The static cost kube-apiserver estimates for a CRD's CEL rules, computed as cel-go's checker
 * (checker/cost.go) and apiextensions-apiserver do, for the parts of CEL the CRDs use: sizes from
 * the schema (a string's maxLength × 4 bytes, a list's maxItems, a map's maxProperties, else what
 * fits in a 3 MiB request), 0.1 per byte traversed, matches() as string × 0.1 times regex × 0.25,
 * both operands of && and ||, the dearer branch of ?:, a comprehension's body times its range.
 * Used by test/api/celCost.test.ts against kube-apiserver's limits.
 */
import { parse } from "@marcbachmann/cel-js"
import type { ASTNode } from "@marcbachmann/cel-js"

type Schema = { readonly [key: string]: any }

export const maxRequestSizeBytes = 3 * 1024 * 1024
const traversal = 0.1
const regexFactor = 0.25

/** What an expression evaluates to, as far as the estimate needs: its maximal size and schema. */
interface Value {
  readonly size: number
  readonly schema?: Schema
  /** For list literals and comprehension results: the elements' schema. */
  readonly element?: Value
}

interface Estimate extends Value {
  readonly cost: number
}

const ceilFactor = (size: number, factor: number) => Math.ceil(size * factor)

/** The size cel-go's Kubernetes environment gives a schema node. */
export const schemaSize = (schema: Schema | undefined): number => {
  if (schema === undefined) return maxRequestSizeBytes
  if (schema["x-kubernetes-int-or-string"] === true) return maxRequestSizeBytes - 2
  switch (schema["type"]) {
    case "string":
      if (typeof schema["maxLength"] === "number") return schema["maxLength"] * 4
      if (Array.isArray(schema["enum"])) return Math.max(...schema["enum"].map((v: string) => v.length))
      if (schema["format"] === "date-time") return 32
      return maxRequestSizeBytes - 2
    case "array":
      return typeof schema["maxItems"] === "number" ? schema["maxItems"] : Math.floor((maxRequestSizeBytes - 2) / 2)
    case "object":
      if (schema["properties"] !== undefined) return Object.keys(schema["properties"]).length
      return typeof schema["maxProperties"] === "number" ? schema["maxProperties"] : Math.floor((maxRequestSizeBytes - 2) / 6)
    default:
      return 1
  }
}

const celValueOf = (schema: Schema | undefined): Value => ({ size: schemaSize(schema), ...(schema === undefined ? {} : { schema }) })

const elementOf = (value: Value): Value => {
  if (value.element !== undefined) return value.element
  const schema = value.schema
  if (schema?.["type"] === "array") return celValueOf(schema["items"])
  if (schema?.["type"] === "object" && typeof schema["additionalProperties"] === "object") {
    // Comprehensions over a map range over its keys, which kube-apiserver types as its predefined
    // StringType (SchemaDeclType: NewMapType(StringType, ...)), whose maximal size is 0.
    return { size: 0, schema: { type: "string" } }
  }
  return { size: maxRequestSizeBytes }
}

const macros = new Set(["all", "exists", "exists_one", "filter", "map"])

/** The estimated maximal cost of `expression` with `self` of `schema`. */
export const estimateCost = (expression: string, schema: Schema): number =>
  estimate(parse(expression).ast, new Map([["self", celValueOf(schema)]])).cost

const estimate = (node: ASTNode, scope: ReadonlyMap<string, Value>): Estimate => {
  const args = node.args as any
  switch (node.op) {
    case "value":
      return { cost: 0, size: typeof args === "string" ? args.length : 1 }
    case "id":
      return { cost: 1, ...(scope.get(args as string) ?? { size: maxRequestSizeBytes }) }
    case ".": {
      const target = estimate(args[0], scope)
      const field =
        target.schema?.["properties"]?.[args[1]] ??
        (typeof target.schema?.["additionalProperties"] === "object" ? target.schema["additionalProperties"] : undefined)
      return { cost: target.cost + 1, ...celValueOf(field) }
    }
    case "[]": {
      const target = estimate(args[0], scope)
      const index = estimate(args[1], scope)
      const element = target.schema?.["type"] === "object" ? celValueOf(target.schema["additionalProperties"]) : elementOf(target)
      return { cost: target.cost + index.cost + 1, ...element }
    }
    case "list": {
      const items = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      // cel-go tracks a literal's entry sizes: the largest entry stands for all.
      const largest = items.reduce<Estimate | undefined>((a, i) => (a === undefined || i.size > a.size ? i : a), undefined)
      const { cost: _, ...element } = largest ?? { cost: 0, size: 0 }
      return { cost: 10 + items.reduce((s, i) => s + i.cost, 0), size: items.length, element }
    }
    case "?:": {
      const [c, t, f] = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      const { cost: _, ...larger } = t!.size >= f!.size ? t! : f!
      return { ...larger, cost: c!.cost + Math.max(t!.cost, f!.cost) }
    }
    case "&&":
    case "||": {
      const [l, r] = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      return { cost: l!.cost + r!.cost, size: 1 }
    }
    case "!_":
    case "-_": {
      const a = estimate(args as ASTNode, scope)
      return { cost: a.cost + 1, size: 1 }
    }
    case "==":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=": {
      const [l, r] = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      return { cost: l!.cost + r!.cost + ceilFactor(Math.min(l!.size, r!.size), traversal), size: 1 }
    }
    case "in": {
      const [l, r] = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      return { cost: l!.cost + r!.cost + r!.size, size: 1 }
    }
    case "+": {
      const [l, r] = (args as Array<ASTNode>).map((a) => estimate(a, scope))
      const size = l!.size + r!.size
      return { cost: l!.cost + r!.cost + ceilFactor(size, traversal), size }
    }
    case "call": {
      const [name, callArgs] = args as [string, Array<ASTNode>]
      if (name === "has") return { cost: estimate(callArgs[0]!, scope).cost, size: 1 }
      const estimates = callArgs.map((a) => estimate(a, scope))
      const sum = estimates.reduce((s, e) => s + e.cost, 0)
      if (name === "string") return { cost: sum + 1, size: 20 }
      return { cost: sum + 1, size: 1 }
    }
    case "rcall": {
      const [name, targetNode, callArgs] = args as [string, ASTNode, Array<ASTNode>]
      const target = estimate(targetNode, scope)
      if (macros.has(name)) {
        const variable = callArgs[0]!.args as string
        const element = elementOf(target)
        const inner = new Map(scope)
        inner.set(variable, element)
        const body = estimate(callArgs[callArgs.length - 1]!, inner)
        const step = body.cost + 1
        // The entries of a map's result are its body's values; their cost is counted above, once.
        const { cost: _, ...mapped } = body
        const result: Value =
          name === "map" ? { size: target.size, element: mapped } : name === "filter" ? { size: target.size, element } : { size: 1 }
        return { cost: target.cost + 1 + target.size * step, ...result }
      }
      const estimates = callArgs.map((a) => estimate(a, scope))
      const sum = target.cost + estimates.reduce((s, e) => s + e.cost, 0)
      switch (name) {
        case "matches":
          return { cost: sum + ceilFactor(target.size + 1, traversal) * ceilFactor(estimates[0]!.size, regexFactor), size: 1 }
        case "contains":
          return { cost: sum + ceilFactor(target.size, traversal) * ceilFactor(estimates[0]!.size, traversal), size: 1 }
        case "startsWith":
        case "endsWith":
          return { cost: sum + ceilFactor(estimates[0]!.size, traversal), size: 1 }
        // As kube-apiserver's strings library: split traverses twice and yields up to one entry per
        // character; join's result is counted as its separators (one fewer than the entries).
        case "split":
          return { cost: sum + ceilFactor(target.size, 2 * traversal), size: target.size, element: { size: target.size } }
        case "join": {
          const size = (estimates[0]?.size ?? 0) * Math.max(0, target.size - 1)
          return { cost: sum + ceilFactor(size, traversal), size }
        }
        case "substring":
        case "lowerAscii":
        case "indexOf":
        case "lastIndexOf":
          return { cost: sum + ceilFactor(target.size, traversal), size: target.size }
        default:
          return { cost: sum + 1, size: 1 }
      }
    }
    default:
      throw new Error(`no cost model for ${node.op}`)
  }
}

export interface RuleCost {
  readonly path: string
  readonly rule: string
  readonly cost: number
  readonly cardinality: number
  readonly messageCost: number
}

/** Every rule of a structural schema with its estimated cost and how often it can run per object. */
export const ruleCosts = (schema: Schema, path = "", cardinality = 1): Array<RuleCost> => {
  const out: Array<RuleCost> = []
  for (const rule of (schema["x-kubernetes-validations"] ?? []) as Array<{ rule: string; messageExpression?: string }>) {
    out.push({
      path,
      rule: rule.rule,
      cost: estimateCost(rule.rule, schema),
      cardinality,
      messageCost: rule.messageExpression === undefined ? 0 : estimateCost(rule.messageExpression, schema)
    })
  }
  for (const [name, child] of Object.entries((schema["properties"] ?? {}) as Record<string, Schema>)) {
    out.push(...ruleCosts(child, `${path}.${name}`, cardinality))
  }
  if (schema["items"] !== undefined) out.push(...ruleCosts(schema["items"], `${path}[]`, cardinality * schemaSize(schema)))
  if (typeof schema["additionalProperties"] === "object") {
    out.push(...ruleCosts(schema["additionalProperties"], `${path}[*]`, cardinality * schemaSize(schema)))
  }
  return out
}
