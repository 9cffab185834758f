/**
 * What a PromQL expression refers to, read with Prometheus's own grammar (@prometheus-io/lezer-promql,
 * the parser of the Prometheus UI) rather than with regular expressions: the series it selects
 * (metric name and the label names of its matchers), and every label name it uses anywhere.
 */
import { parser } from "@prometheus-io/lezer-promql"

type SyntaxNode = NonNullable<ReturnType<typeof parser.parse>["topNode"]["firstChild"]>

export interface Selector {
  /** The metric name, from the selector's name or a `__name__="..."` matcher; undefined for `{job="x"}`. */
  readonly metric: string | undefined
  readonly matchers: ReadonlyArray<{ readonly label: string; readonly op: string; readonly value: string }>
}

export interface PromqlRefs {
  readonly selectors: ReadonlyArray<Selector>
  /** Label names in by/without and on/ignoring/group_* clauses (matchers' are in `selectors`). */
  readonly labels: ReadonlyArray<string>
  readonly errors: ReadonlyArray<string>
}

/** Grafana's built-in range variables stand for a duration; other variables only appear in strings. */
export const withoutGrafanaVariables = (expr: string): string => expr.replace(/\$__(rate_interval|interval|range)\b/g, "5m")

const unquote = (literal: string): string => {
  if (literal.startsWith("`")) return literal.slice(1, -1)
  return JSON.parse(literal.startsWith("'") ? `"${literal.slice(1, -1).replace(/"/g, '\\"')}"` : literal) as string
}

const childrenOf = (node: SyntaxNode, name: string): Array<SyntaxNode> => {
  const out: Array<SyntaxNode> = []
  for (let child = node.firstChild; child !== null; child = child.nextSibling) if (child.name === name) out.push(child)
  return out
}

export const promqlRefs = (expr: string): PromqlRefs => {
  const text = withoutGrafanaVariables(expr)
  const tree = parser.parse(text)
  const selectors: Array<Selector> = []
  const labels: Array<string> = []
  const errors: Array<string> = []
  const cursor = tree.cursor()
  do {
    const node = cursor.node
    if (node.type.isError) {
      errors.push(`syntax error at ${node.from}: ${JSON.stringify(text.slice(Math.max(0, node.from - 20), node.to + 20))}`)
    }
    if (node.name === "LabelName" && node.parent?.name === "GroupingLabels") labels.push(text.slice(node.from, node.to))
    if (node.name === "VectorSelector") {
      const identifier = childrenOf(node, "Identifier")[0]
      const matchers: Array<Selector["matchers"][number]> = []
      for (const list of childrenOf(node, "LabelMatchers")) {
        for (let m = list.firstChild; m !== null; m = m.nextSibling) {
          if (!m.name.endsWith("LabelMatcher")) continue
          const name = m.getChild("LabelName") ?? m.getChild("QuotedLabelName")
          const op = m.getChild("MatchOp")
          const value = m.getChild("StringLiteral")
          if (name === null || op === null || value === null) continue
          const label = name.name === "LabelName" ? text.slice(name.from, name.to) : unquote(text.slice(name.from, name.to))
          matchers.push({ label, op: text.slice(op.from, op.to), value: unquote(text.slice(value.from, value.to)) })
        }
      }
      const byName = matchers.find((m) => m.label === "__name__" && m.op === "=")
      selectors.push({ metric: identifier ? text.slice(identifier.from, identifier.to) : byName?.value, matchers })
    }
  } while (cursor.next())
  return { selectors, labels, errors }
}
