import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { prometheusContentType } from "prom-client"
import { Unauthorized } from "../../src/cri/errors.ts"
import { Metrics, pullFailureOf } from "../../src/ops/metrics.ts"

interface Family {
  type: string
  help: string
  samples: Array<{ name: string; labels: Record<string, string>; value: number }>
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is HELP, TYPE or a sample of
 * the family declared just before it, so a malformed exposition fails the test.
 */
const parseExposition = (body: string): Map<string, Family> => {
  const families = new Map<string, Family>()
  let current: string | undefined
  for (const line of body.split("\n")) {
    if (line === "") continue
    const help = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (help) {
      current = help[1]!
      families.set(current, { type: "", help: help[2]!, samples: [] })
      continue
    }
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      expect(type[1]).toBe(current)
      families.get(current!)!.type = type[2]!
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!sample) throw new Error(`not an exposition line: ${line}`)
    const [, name, labelText, value] = sample
    const family = families.get(current!)!
    const suffixes = family.type === "histogram" ? ["_bucket", "_sum", "_count"] : family.type === "summary" ? ["", "_sum", "_count"] : [""]
    expect(suffixes.map((suffix) => current + suffix)).toContain(name)
    const labels: Record<string, string> = {}
    for (const [, key, text] of (labelText ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g)) {
      labels[key!] = text!
    }
    // Go's ParseFloat (Prometheus' parser) reads NaN and Inf in any case; prom-client writes "Nan".
    const special: Record<string, number> = { "+inf": Infinity, "-inf": -Infinity, nan: NaN }
    const number = special[value!.toLowerCase()] ?? Number(value)
    expect(Number.isNaN(number) && value!.toLowerCase() !== "nan", line).toBe(false)
    family.samples.push({ name: name!, labels, value: number })
  }
  return families
}

const render = Effect.gen(function* () {
  const metrics = yield* Metrics
  const { body, contentType } = yield* metrics.render
  return { contentType, families: parseExposition(body), body }
})

const expected: Record<string, { type: string; labels: ReadonlyArray<string> }> = {
  preheat_reconciles_total: { type: "counter", labels: ["controller", "result"] },
  preheat_reconcile_errors_total: { type: "counter", labels: ["controller"] },
  preheat_reconcile_duration_seconds: { type: "histogram", labels: ["controller"] },
  preheat_workqueue_depth: { type: "gauge", labels: ["name"] },
  preheat_workqueue_wait_seconds: { type: "histogram", labels: ["name"] },
  preheat_api_requests_total: { type: "counter", labels: ["verb", "kind", "result"] },
  preheat_jobs: { type: "gauge", labels: ["phase"] },
  preheat_nodes_pulling: { type: "gauge", labels: [] },
  preheat_jobs_digest_mismatch: { type: "gauge", labels: [] },
  preheat_leader: { type: "gauge", labels: [] },
  preheat_nodes_warming: { type: "gauge", labels: [] },
  preheat_registry_pull_limit: { type: "gauge", labels: ["registry"] },
  preheat_node_warm_seconds: { type: "histogram", labels: ["outcome"] },
  preheat_pulls_total: { type: "counter", labels: ["result", "reason"] },
  preheat_pull_duration_seconds: { type: "histogram", labels: [] },
  preheat_pulled_bytes_total: { type: "counter", labels: [] },
  preheat_pull_workers: { type: "gauge", labels: ["state"] }
}

const recordOneOfEach = Effect.gen(function* () {
  const metrics = yield* Metrics
  yield* metrics.recordReconcile("imagepulljob", "success", 0.02)
  yield* metrics.recordReconcile("imagepulljob", "error", 0.5)
  yield* metrics.recordReconcile("nodeimage", "requeue", 0.001)
  yield* metrics.setWorkqueueDepth("imagepulljob", 7)
  yield* metrics.observeWorkqueueWait("imagepulljob", 0.3)
  yield* metrics.countApiRequest("patch", "NodeImage/status", "ok")
  yield* metrics.countApiRequest("update", "NodeImage", "conflict")
  yield* metrics.setJobs({ running: 3, completed: 2, paused: 1, invalid: 0 })
  yield* metrics.setNodesPulling(4)
  yield* metrics.setJobsWithDigestMismatch(1)
  yield* metrics.setLeader(true)
  yield* metrics.setNodesWarming(2)
  yield* metrics.setRegistryPullLimits(new Map([["docker.io", 5]]))
  yield* metrics.recordNodeWarm("timeout", 600)
  yield* metrics.recordPull({ result: "succeeded", reason: "pulled" }, 42)
  yield* metrics.recordPull(pullFailureOf(new Unauthorized({ image: "r/x:1", message: "401" })), 3)
  yield* metrics.addPulledBytes(1_000_000)
  yield* metrics.addPulledBytes(-5)
  yield* metrics.setPullWorkers({ active: 2, waiting: 5 })
})

describe("Metrics", () => {
  it.effect("exposes every family with its type and label names, in the Prometheus text format", () =>
    Effect.gen(function* () {
      yield* recordOneOfEach
      const { contentType, families } = yield* render
      expect(contentType).toBe(prometheusContentType)
      for (const [name, { type, labels }] of Object.entries(expected)) {
        const family = families.get(name)
        expect(family, name).toBeDefined()
        expect(family!.type, name).toBe(type)
        expect(family!.help.length, name).toBeGreaterThan(0)
        for (const sample of family!.samples) {
          const own = Object.keys(sample.labels).filter((label) => label !== "le")
          expect(own.sort(), name).toEqual([...labels].sort())
        }
      }
      expect([...families.keys()].filter((name) => !name.startsWith("preheat_"))).toEqual([])
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("records what the helpers say", () =>
    Effect.gen(function* () {
      yield* recordOneOfEach
      const { body } = yield* render
      expect(body).toContain(`preheat_reconciles_total{controller="imagepulljob",result="success"} 1`)
      expect(body).toContain(`preheat_reconciles_total{controller="imagepulljob",result="error"} 1`)
      expect(body).toContain(`preheat_reconciles_total{controller="nodeimage",result="requeue"} 1`)
      expect(body).toContain(`preheat_reconcile_errors_total{controller="imagepulljob"} 1`)
      expect(body).toContain(`preheat_reconcile_duration_seconds_count{controller="imagepulljob"} 2`)
      expect(body).toContain(`preheat_workqueue_depth{name="imagepulljob"} 7`)
      expect(body).toContain(`preheat_api_requests_total{verb="patch",kind="NodeImage/status",result="ok"} 1`)
      expect(body).toContain(`preheat_api_requests_total{verb="update",kind="NodeImage",result="conflict"} 1`)
      expect(body).toContain(`preheat_jobs{phase="running"} 3`)
      expect(body).toContain(`preheat_jobs{phase="invalid"} 0`)
      expect(body).toContain(`preheat_nodes_pulling 4`)
      expect(body).toContain(`preheat_jobs_digest_mismatch 1`)
      expect(body).toContain(`preheat_leader 1`)
      expect(body).toContain(`preheat_nodes_warming 2`)
      expect(body).toContain(`preheat_node_warm_seconds_count{outcome="timeout"} 1`)
      expect(body).toContain(`preheat_node_warm_seconds_count{outcome="warmed"} 0`)
      expect(body).toContain(`preheat_pulls_total{result="succeeded",reason="pulled"} 1`)
      expect(body).toContain(`preheat_pulls_total{result="failed",reason="unauthorized"} 1`)
      expect(body).toContain(`preheat_pulled_bytes_total 1000000`)
      expect(body).toContain(`preheat_pull_workers{state="waiting"} 5`)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("each registry's pull limit is set all at once: a registry whose limit went away drops out", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* metrics.setRegistryPullLimits(
        new Map([
          ["docker.io", 5],
          ["quay.io", 10]
        ])
      )
      yield* metrics.setRegistryPullLimits(new Map([["docker.io", 6]]))
      const { body } = yield* render
      expect(body).toContain(`preheat_registry_pull_limit{registry="docker.io"} 6`)
      expect(body).not.toContain(`registry="quay.io"`)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("starts enumerated gauges at 0 so they are visible before the first change", () =>
    Effect.gen(function* () {
      const { families } = yield* render
      const values = (name: string) => families.get(name)!.samples.map((s) => [s.labels, s.value])
      expect(values("preheat_jobs")).toEqual([
        [{ phase: "running" }, 0],
        [{ phase: "completed" }, 0],
        [{ phase: "paused" }, 0],
        [{ phase: "invalid" }, 0]
      ])
      expect(values("preheat_pull_workers")).toEqual([
        [{ state: "active" }, 0],
        [{ state: "waiting" }, 0]
      ])
      expect(values("preheat_leader")).toEqual([[{}, 0]])
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("pull durations have buckets from 0.1 s to 30 min", () =>
    Effect.gen(function* () {
      const { families } = yield* render
      const bounds = families
        .get("preheat_pull_duration_seconds")!
        .samples.filter((s) => s.name.endsWith("_bucket"))
        .map((s) => s.labels["le"])
      expect(bounds[0]).toBe("0.1")
      expect(bounds.at(-2)).toBe("1800")
      expect(bounds.at(-1)).toBe("+Inf")
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("read sums matching samples; for a histogram it counts observations", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      yield* recordOneOfEach
      expect(yield* metrics.read("preheat_reconciles_total")).toBe(3)
      expect(yield* metrics.read("preheat_reconciles_total", { controller: "imagepulljob" })).toBe(2)
      expect(yield* metrics.read("preheat_api_requests_total", { result: "conflict" })).toBe(1)
      expect(yield* metrics.read("preheat_pull_duration_seconds")).toBe(2)
      expect(yield* metrics.read("preheat_no_such_metric")).toBe(0)
    }).pipe(Effect.provide(Metrics.layerTest))
  )

  it.effect("the process layer adds the default process and Node.js metrics to the same registry", () =>
    Effect.gen(function* () {
      const { families } = yield* render
      expect(families.get("process_cpu_seconds_total")?.type).toBe("counter")
      expect(families.get("process_resident_memory_bytes")?.type).toBe("gauge")
      expect(families.get("nodejs_heap_size_used_bytes")?.type).toBe("gauge")
      expect(families.get("preheat_leader")?.type).toBe("gauge")
    }).pipe(Effect.provide(Metrics.layer))
  )

  it.effect("each layer build has its own registry", () =>
    Effect.gen(function* () {
      const a = yield* Effect.provide(Effect.service(Metrics), Metrics.layerTest)
      const b = yield* Effect.provide(Effect.service(Metrics), Metrics.layerTest)
      yield* a.setLeader(true)
      expect(yield* a.read("preheat_leader")).toBe(1)
      expect(yield* b.read("preheat_leader")).toBe(0)
    })
  )
})
