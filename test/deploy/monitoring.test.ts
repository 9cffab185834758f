/**
 * deploy/monitoring/ against the code: every metric a dashboard panel, a template variable or an
 * alert names is one the code registers (src/ops/metrics.ts, with prom-client's process and
 * Node.js metrics), with labels it has or that the scrape adds; every `job` they select is one the
 * ServiceMonitor/PodMonitor sets; the expressions parse with Prometheus's grammar.
 */
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Histogram, Summary } from "prom-client"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { makeMetrics } from "../../src/ops/metrics.ts"
import { promqlRefs } from "./promql.ts"

type Obj = Record<string, any>

const dir = resolve(import.meta.dirname, "../../deploy/monitoring")
const yamlDocs = (file: string): Array<Obj> =>
  parseAllDocuments(readFileSync(join(dir, file), "utf8"))
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null)

const monitors = yamlDocs("monitors.yaml")
const rules = yamlDocs("alerts.yaml")[0]!
const dashboard = JSON.parse(readFileSync(join(dir, "dashboard.json"), "utf8")) as Obj

/** Every series name the code exposes, with its label names (histograms: _bucket with le, _sum, _count). */
const exposedSeries = (): Map<string, ReadonlySet<string>> => {
  const { registry } = makeMetrics({ processMetrics: true })
  const series = new Map<string, ReadonlySet<string>>()
  for (const metric of registry.getMetricsAsArray()) {
    const labels = ((metric as unknown as { labelNames?: ReadonlyArray<string> }).labelNames ?? []) as ReadonlyArray<string>
    if (metric instanceof Histogram) {
      series.set(`${metric.name}_bucket`, new Set([...labels, "le"]))
      series.set(`${metric.name}_sum`, new Set(labels))
      series.set(`${metric.name}_count`, new Set(labels))
    } else if (metric instanceof Summary) {
      series.set(metric.name, new Set([...labels, "quantile"]))
      series.set(`${metric.name}_sum`, new Set(labels))
      series.set(`${metric.name}_count`, new Set(labels))
    } else {
      series.set(metric.name, new Set(labels))
    }
  }
  registry.clear()
  // Written by Prometheus itself for every target.
  series.set("up", new Set())
  return series
}

/** Labels Prometheus Operator puts on every target, plus what the monitors' relabelings add. */
const targetLabels = new Set([
  "job",
  "instance",
  "namespace",
  "pod",
  "container",
  "service",
  "endpoint",
  ...monitors
    .flatMap((m) => [...(m.spec.endpoints ?? []), ...(m.spec.podMetricsEndpoints ?? [])])
    .flatMap((e: Obj) => (e.relabelings ?? []).map((r: Obj) => r.targetLabel as string))
])
const jobs = new Set(
  monitors
    .flatMap((m) => [...(m.spec.endpoints ?? []), ...(m.spec.podMetricsEndpoints ?? [])])
    .flatMap((e: Obj) => (e.relabelings ?? []).filter((r: Obj) => r.targetLabel === "job").map((r: Obj) => r.replacement as string))
)

const series = exposedSeries()

/** What is wrong with one expression; empty when everything it names exists. */
const problems = (expr: string): Array<string> => {
  const refs = promqlRefs(expr)
  const out = [...refs.errors]
  const used = new Set<string>()
  for (const selector of refs.selectors) {
    if (selector.metric === undefined) {
      out.push("a selector without a metric name")
      continue
    }
    const labels = series.get(selector.metric)
    if (labels === undefined) {
      out.push(`no metric ${selector.metric}`)
      continue
    }
    for (const l of labels) used.add(l)
    for (const matcher of selector.matchers) {
      if (matcher.label === "__name__") continue
      if (!labels.has(matcher.label) && !targetLabels.has(matcher.label)) out.push(`${selector.metric} has no label ${matcher.label}`)
      if (matcher.label === "job") {
        const named = matcher.op === "=~" ? matcher.value.split("|") : [matcher.value]
        for (const job of named) if (!jobs.has(job)) out.push(`no monitor sets job ${job}`)
      }
    }
  }
  for (const label of refs.labels) {
    if (label !== "__name__" && !used.has(label) && !targetLabels.has(label)) out.push(`no metric in the expression has label ${label}`)
  }
  return out
}

/** The labels an expression's result can carry at most: its metrics' and the scrape's. */
const labelsOf = (expr: string): Set<string> =>
  new Set([...targetLabels, ...promqlRefs(expr).selectors.flatMap((s) => [...(series.get(s.metric ?? "") ?? [])])])

const panels = (list: ReadonlyArray<Obj>): Array<Obj> => list.flatMap((p) => [p, ...panels(p.panels ?? [])])
const dashboardExprs = panels(dashboard.panels).flatMap((p) =>
  (p.targets ?? []).map((t: Obj) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr as string, legend: t.legendFormat as string }))
)
const ruleList = (rules.spec.groups as Array<Obj>).flatMap((g) => g.rules as Array<Obj>)

describe("the checker", () => {
  it("finds a metric that does not exist, a wrong label, an unknown job and a syntax error", () => {
    expect(problems("sum(rate(preheat_pull_total[5m]))")).toEqual(["no metric preheat_pull_total"])
    expect(problems('sum(rate(preheat_pulls_total{phase="failed"}[5m]))')).toEqual(["preheat_pulls_total has no label phase"])
    expect(problems("sum by (phase) (rate(preheat_pulls_total[5m]))")).toEqual(["no metric in the expression has label phase"])
    expect(problems('up{job="preheat"}')).toEqual(["no monitor sets job preheat"])
    expect(problems("sum(rate(preheat_pulls_total[5m])")).not.toEqual([])
    expect(problems('{__name__="preheat_nope"}')).toEqual(["no metric preheat_nope"])
    expect(problems("histogram_quantile(0.9, sum by (le) (rate(preheat_pull_duration_seconds_bucket[$__rate_interval])))")).toEqual([])
  })
})

describe("the Grafana dashboard", () => {
  it("names only metrics and labels the code registers", () => {
    expect(dashboardExprs.length).toBeGreaterThan(10)
    for (const { where, expr, legend } of dashboardExprs) {
      expect(problems(expr), `${where}: ${expr}`).toEqual([])
      // A legend shows labels of the result: they must exist.
      for (const [, label] of legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
        expect([...labelsOf(expr)], `${where} legend ${legend}`).toContain(label)
      }
    }
  })

  it("covers what operators ask for", () => {
    const all = dashboardExprs.map((e) => e.expr).join("\n")
    for (const metric of [
      "preheat_jobs",
      "preheat_pulls_total",
      "preheat_pulled_bytes_total",
      "preheat_pull_duration_seconds_bucket",
      "preheat_workqueue_depth",
      "preheat_reconcile_duration_seconds_bucket",
      "preheat_api_requests_total",
      "preheat_leader",
      "preheat_pull_workers",
      "preheat_nodes_warming",
      "preheat_node_warm_seconds_bucket"
    ])
      expect(all).toContain(metric)
  })

  it("has template variables whose queries name existing metrics and labels", () => {
    for (const variable of dashboard.templating.list as Array<Obj>) {
      if (variable.type !== "query") continue
      const [, selector, label] = /^label_values\((.+),\s*(\w+)\)$/.exec(variable.query.query)!
      expect(problems(selector!)).toEqual([])
      const metric = promqlRefs(selector!).selectors[0]!.metric!
      expect([...series.get(metric)!, ...targetLabels]).toContain(label)
    }
  })
})

describe("the PrometheusRule", () => {
  it("alerts on failing pulls, stuck jobs, a daemon not reporting, no leader and nodes released by the warm timeout", () => {
    expect(ruleList.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        "PreheatPullsFailing",
        "PreheatJobsStuck",
        "PreheatDaemonNotReporting",
        "PreheatControllerWithoutLeader",
        "PreheatNodesReleasedUnwarmed"
      ])
    )
  })

  it.each(ruleList.map((r) => [r.alert as string, r] as const))("%s names only metrics and labels the code registers", (_, rule) => {
    expect(problems(rule.expr), rule.expr).toEqual([])
    expect(rule.labels.severity).toMatch(/^(warning|critical)$/)
    expect(rule.annotations.summary).toBeTruthy()
    // Annotations only use labels that exist on what the expression selects.
    for (const [, label] of `${rule.annotations.summary} ${rule.annotations.description}`.matchAll(/\$labels\.(\w+)/g)) {
      expect([...labelsOf(rule.expr)], `${rule.alert} annotation label ${label}`).toContain(label)
    }
  })
})

describe("the monitors", () => {
  it("scrape the metrics ports of deploy/'s controller Service and daemon pods", () => {
    const deploy = resolve(dir, "..")
    const docs = ["controller.yaml", "daemon.yaml"].flatMap((f) =>
      parseAllDocuments(readFileSync(join(deploy, f), "utf8")).map((d) => d.toJS() as Obj)
    )
    const service = docs.find((d) => d.kind === "Service")!
    const daemonSet = docs.find((d) => d.kind === "DaemonSet")!
    const serviceMonitor = monitors.find((m) => m.kind === "ServiceMonitor")!
    const podMonitor = monitors.find((m) => m.kind === "PodMonitor")!
    expect(service.metadata.labels).toMatchObject(serviceMonitor.spec.selector.matchLabels)
    expect(service.spec.ports.map((p: Obj) => p.name)).toContain(serviceMonitor.spec.endpoints[0].port)
    expect(daemonSet.spec.template.metadata.labels).toMatchObject(podMonitor.spec.selector.matchLabels)
    expect(daemonSet.spec.template.spec.containers[0].ports.map((p: Obj) => p.name)).toContain(podMonitor.spec.podMetricsEndpoints[0].port)
    expect([...jobs].sort()).toEqual(["preheat-controller", "preheat-daemon"])
  })
})
