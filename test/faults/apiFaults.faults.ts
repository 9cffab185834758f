/**
 * Faults between the processes (issue 13): the built bundle as API server, two controller replicas
 * and three daemons on the simulated runtime, the controllers and daemons reaching the API server
 * through a FaultProxy. Every scenario runs one ImagePullJob under its fault and must end with the
 * job complete, every node's tag pulled exactly once, no secret copy or NodeImage tag left after the
 * job is deleted, and no storm of duplicate events. A summary line per scenario goes to stdout and
 * to docs/benchmarks.md ("Reliability") by hand.
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { metricSum, scrape, sleep, specTags, tagPhases } from "../system/cluster.ts"
import { eventually } from "../support/eventually.ts"
import type { ProxyCounts } from "../support/faultProxy.ts"
import { isWrite } from "../support/faultProxy.ts"
import { type FaultCluster, imagePulling, jobManifest, memoryOf, pullsOn, startFaultCluster } from "./faultCluster.ts"

const nodes = ["node-1", "node-2", "node-3"] as const
/** Every job pulls an image the simulated runtime takes 2 to 2.5 s for: the fault-free makespans compare. */
const pullRange = [2_000, 2_500] as const

let fc: FaultCluster
const summaries: Array<string> = []
/** Fault-free makespans by parallelism, from the first two scenarios. */
const faultFree: Record<number, { readonly makespanMs: number; readonly counts: ProxyCounts }> = {}

beforeAll(async () => {
  fc = await startFaultCluster(nodes, 2)
}, 180_000)

afterAll(async () => {
  console.info(summaries.join("\n"))
  await fc?.proxy.stop()
  await fc?.cluster.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(fc.cluster.dumpLogs())
  })
})

interface Run {
  readonly makespanMs: number
  readonly counts: ProxyCounts
}

const leaders = async (): Promise<Array<number>> =>
  Promise.all(fc.controllers.map(async ({ port }) => metricSum(await scrape(port), "preheat_leader")))

/**
 * Applies a job, runs `fault` alongside (it returns when the fault is over), waits for the job to
 * complete and for the fault to end, then checks what every scenario must end with and deletes the job.
 */
const runJob = async (
  name: string,
  parallelism: number,
  fault: (image: string, completed: () => boolean) => Promise<void>
): Promise<Run> => {
  const image = imagePulling(...pullRange)
  const pullsBefore = await pullsOn(fc)
  fc.proxy.resetCounts()
  const started = Date.now()
  const applied = await fc.cluster.applyFile(name, jobManifest(name, image, parallelism))
  expect(applied.code, applied.stderr).toBe(0)
  let makespanMs = 0
  const faultOver = fault(image, () => makespanMs > 0)
  const completed = eventually(
    `${name} complete`,
    async () => {
      const time = await fc.cluster.ok(["get", "ipj", name, "-o", "jsonpath={.status.completionTime}"])
      if (time === "") return undefined
      makespanMs = Date.now() - started
      return true
    },
    400_000,
    200
  )
  await Promise.all([completed, faultOver])
  fc.proxy.clear()
  const counts = fc.proxy.resetCounts()

  const job = await fc.cluster.getYaml(["ipj", name])
  expect(job.status).toMatchObject({ desired: nodes.length, succeeded: nodes.length, failed: 0 })
  const pullsAfter = await pullsOn(fc)
  for (const node of nodes) expect({ node, pulls: pullsAfter[node]! - pullsBefore[node]! }).toEqual({ node, pulls: 1 })
  for (const { process } of fc.controllers) expect(process.child.exitCode, `${process.name} exited`).toBeNull()

  // No storm: each (reason, message) about the job at most twice (a retried reconcile may repeat one).
  const events: Array<any> = (await fc.cluster.getYaml(["events", "-n", "default"])).items
  const ofJob = events.filter((event) => event.involvedObject?.uid === job.metadata.uid)
  const repeats = new Map<string, number>()
  for (const event of ofJob) repeats.set(`${event.reason}: ${event.message}`, (repeats.get(`${event.reason}: ${event.message}`) ?? 0) + 1)
  for (const [what, count] of repeats) expect({ what, count: Math.min(count, 2) }).toEqual({ what, count })

  await fc.cluster.ok(["delete", "ipj", name])
  await eventually(
    `no NodeImage keeping ${image}`,
    async () => {
      const nodeImages: Array<any> = (await fc.cluster.getYaml(["nodeimages"])).items
      return nodeImages.every((nodeImage) => specTags(nodeImage, image.split(":")[0]!).length === 0) ? true : undefined
    },
    60_000
  )
  await eventually(
    "no secret copy left",
    async () => {
      const copies = await fc.cluster.ok(["get", "secrets", "-n", "preheat-daemon-config", "-o", "name"])
      return copies.trim() === "" ? true : undefined
    },
    60_000
  )
  return { makespanMs, counts }
}

/** faultMs undefined: the scenario has no makespan limit (a slow server is slower throughout). */
const summarize = (scenario: string, run: Run, parallelism: number, faultMs: number | undefined, extra = ""): string => {
  const base = faultFree[parallelism]
  const limitMs = base === undefined || faultMs === undefined ? undefined : 1.25 * base.makespanMs + faultMs
  const line =
    `[faults] ${scenario}: requests ${run.counts.requests}, retries ${run.counts.retries}, relists ${run.counts.lists}, ` +
    `watches ${run.counts.watches}, faulted ${JSON.stringify(run.counts.faulted)}, makespan ${(run.makespanMs / 1000).toFixed(1)} s` +
    (base === undefined
      ? ""
      : ` (fault-free ${(base.makespanMs / 1000).toFixed(1)} s` +
        (limitMs === undefined ? ")" : `, limit ${(limitMs / 1000).toFixed(1)} s)`)) +
    (extra === "" ? "" : `, ${extra}`)
  summaries.push(line)
  console.info(line)
  return line
}

const controllerLogs = () => fc.controllers.map(({ process }) => readFileSync(process.logFile, "utf8")).join("\n")

describe("an API server that throttles, errs, stalls and drops watches", () => {
  it("fault-free baseline, parallelism 1 and 3", async () => {
    for (const parallelism of [1, 3]) {
      const run = await runJob(`baseline-${parallelism}`, parallelism, async () => undefined)
      faultFree[parallelism] = run
      summarize(`fault-free, parallelism ${parallelism}`, run, parallelism, undefined)
    }
  })

  it("429 with Retry-After: no request sooner than asked, and no idling after the fault", async () => {
    const faultMs = 15_000
    const run = await runJob("throttled", 1, async () => {
      fc.proxy.set({ fault: { kind: "throttle", retryAfterSeconds: 1 }, share: 0.5 })
      await sleep(faultMs)
      fc.proxy.clear()
    })
    summarize("429 + Retry-After 1 s on half the requests for 15 s", run, 1, faultMs, `early retries ${run.counts.earlyRetries.length}`)
    expect(run.counts.faulted["throttle"]).toBeGreaterThan(0)
    expect(run.counts.retries).toBeGreaterThan(0)
    expect(run.counts.earlyRetries).toEqual([])
    expect(run.makespanMs).toBeLessThanOrEqual(1.25 * faultFree[1]!.makespanMs + faultMs)
  })

  it("500, 503 and connections reset mid-response: retried with backoff, typed errors in the logs, no crash", async () => {
    const faultMs = 15_000
    const run = await runJob("erring", 1, async () => {
      fc.proxy.set(
        { fault: { kind: "error", code: 500 }, share: 0.2 },
        { fault: { kind: "error", code: 503 }, share: 0.2 },
        { fault: { kind: "reset" }, share: 0.2 }
      )
      await sleep(faultMs)
      fc.proxy.clear()
    })
    summarize("500, 503 and resets on ~half the requests for 15 s", run, 1, faultMs)
    expect(run.counts.faulted["error500"]).toBeGreaterThan(0)
    expect(run.counts.faulted["error503"]).toBeGreaterThan(0)
    expect(run.counts.faulted["reset"]).toBeGreaterThan(0)
    expect(run.counts.retries).toBeGreaterThan(0)
    // The failures the callers saw are typed (Unavailable naming the request), not crashes.
    expect(controllerLogs()).toMatch(/Unavailable/)
    expect(controllerLogs()).not.toMatch(/defect|Die/i)
  })

  it("watches ended early and mid-event: watchers resume from their resourceVersion without listing again", async () => {
    const faultMs = 15_000
    const run = await runJob("watch-cuts", 1, async () => {
      fc.proxy.set(
        { fault: { kind: "cutWatch", afterEvents: 1, midEvent: false }, share: 0.5 },
        { fault: { kind: "cutWatch", afterEvents: 1, midEvent: true } }
      )
      await sleep(faultMs)
      fc.proxy.clear()
    })
    summarize("every watch ended after 1 event (half of them in the middle of the next) for 15 s", run, 1, faultMs)
    expect(run.counts.faulted["cutWatch"]).toBeGreaterThan(0)
    // Every watch ended was opened again (the job may complete before the fault ends, when every
    // watch opened was one the fault would cut), each from the version it had reached.
    expect(run.counts.watches).toBeGreaterThanOrEqual(run.counts.faulted["cutWatch"]!)
    expect(run.counts.resumedWatches).toBe(run.counts.watches)
    expect(run.counts.lists).toBe(faultFree[1]!.counts.lists)
  })

  it("a slow server (5 s per write): at most `parallelism` nodes active, and bounded memory", async () => {
    let maxActive = 0
    let peakMiB = 0
    const run = await runJob("slow-writes", 1, async (image, completed) => {
      fc.proxy.set({ fault: { kind: "latency", minMs: 5_000, maxMs: 5_000 }, match: isWrite })
      const repository = image.split(":")[0]!
      while (!completed()) {
        const nodeImages: Array<any> = (await fc.cluster.getYaml(["nodeimages"])).items
        // Active: the tag asked of the node and not finished there yet.
        const active = nodeImages.filter(
          (nodeImage) =>
            specTags(nodeImage, repository).length > 0 && !["Succeeded", "Failed"].includes(tagPhases(nodeImage, repository)["v1"] ?? "")
        ).length
        maxActive = Math.max(maxActive, active)
        for (const { process } of fc.controllers) peakMiB = Math.max(peakMiB, memoryOf(process).rssMiB)
        await sleep(250)
      }
    })
    summarize(
      "every write 5 s late",
      run,
      1,
      undefined,
      `most active nodes ${maxActive} (parallelism 1), controller peak RSS ${peakMiB.toFixed(0)} MiB`
    )
    expect(maxActive).toBe(1)
    expect(peakMiB).toBeLessThan(400)
  }, 600_000)

  it("fully down for 2 minutes: daemons finish their pulls and report them after; never two leaders", async () => {
    const outageMs = 120_000
    let bothLeading = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const now = await leaders()
        if (now.filter((l) => l === 1).length > 1) bothLeading++
        await sleep(250)
      }
    })()
    let pullsInOutage: Record<string, number> = {}
    const run = await runJob("outage", 3, async (image) => {
      const repository = image.split(":")[0]!
      // Down once every node has been given the tag: the pulls are under way.
      await eventually(
        "the tag given to every node",
        async () => {
          const nodeImages: Array<any> = (await fc.cluster.getYaml(["nodeimages"])).items
          return nodeImages.filter((nodeImage) => specTags(nodeImage, repository).length > 0).length === nodes.length ? true : undefined
        },
        60_000,
        100
      )
      const before = await pullsOn(fc)
      await fc.proxy.down()
      await sleep(outageMs - 5_000)
      const during = await pullsOn(fc)
      pullsInOutage = Object.fromEntries(nodes.map((node) => [node, during[node]! - before[node]!]))
      await sleep(5_000)
      await fc.proxy.up()
    }).finally(() => {
      sampling = false
    })
    await sampler
    const afterLeaders = await eventually(
      "a leader after the outage",
      async () => {
        const now = await leaders()
        return now.includes(1) ? now : undefined
      },
      30_000
    )
    summarize(
      "fully down for 120 s once every node pulls",
      run,
      3,
      outageMs,
      `pulls finished while down ${JSON.stringify(pullsInOutage)}, samples with two leaders ${bothLeading}`
    )
    expect(pullsInOutage).toEqual(Object.fromEntries(nodes.map((node) => [node, 1])))
    expect(bothLeading).toBe(0)
    expect(afterLeaders.filter((l) => l === 1)).toHaveLength(1)
    // Back within one retry of the watches and the status writes (backoff capped at 30 s, as client-go's reflector).
    expect(run.makespanMs).toBeLessThanOrEqual(1.25 * faultFree[3]!.makespanMs + outageMs + 30_000)
  }, 600_000)
})
