import { preloadedImageReverified, preloadedImageUnverified } from "../api/imagePullJob.ts"
import { humanDuration } from "../api/humanDuration.ts"
import { estimateRemaining } from "./eta.ts"
import { seg, toLine } from "./line.ts"
import type { Segment, Style } from "./line.ts"
import type { JobPhase, JobView, NodeRow, PreloadedNodes, StatusModel, WarmingNode } from "./model.ts"

/** plain: for pipes and logs (ASCII, no colour); terminal: colours and a block bar. */
export type RenderMode = "plain" | "terminal"

/** More rows than this per job would push the other jobs off the screen. */
const maxNodeRows = 10

const phaseStyle: Record<JobPhase, Style> = { running: "cyan", completed: "green", paused: "yellow", invalid: "red" }

const bar = (job: JobView, width: number, mode: RenderMode): ReadonlyArray<Segment> => {
  const cells = (count: number) => (job.desired <= 0 ? 0 : Math.floor((Math.min(count, job.desired) / job.desired) * width))
  const succeeded = cells(job.succeeded)
  const failed = Math.min(width - succeeded, cells(job.succeeded + job.failed) - succeeded)
  const rest = width - succeeded - failed
  return mode === "plain"
    ? [seg(`[${"#".repeat(succeeded)}${"!".repeat(failed)}${"-".repeat(rest)}]`)]
    : [seg("█".repeat(succeeded), "green"), seg("█".repeat(failed), "red"), seg("░".repeat(rest), "dim")]
}

const percent = (job: JobView): string =>
  job.desired <= 0 ? "  -%" : `${Math.floor(((job.succeeded + job.failed) / job.desired) * 100)}%`.padStart(4)

const eta = (job: JobView, now: number): string => {
  if (job.phase === "completed") return "done"
  if (job.phase !== "running") return "-"
  const remaining = estimateRemaining({
    desired: job.desired,
    finished: job.succeeded + job.failed,
    startTime: job.startTime,
    now
  })
  return remaining === undefined ? "?" : humanDuration(remaining)
}

const elapsed = (job: JobView, now: number): string =>
  job.startTime === undefined ? "-" : humanDuration((job.completionTime ?? now) - job.startTime)

const nodeLine = (row: NodeRow, nameWidth: number, now: number): ReadonlyArray<Segment> => {
  const name = seg(`    ${row.node.padEnd(nameWidth)}  `)
  if (row.phase === "Failed") return [name, seg("Failed   ", "red"), seg(row.message ?? "")]
  const progress = row.progress === undefined ? "   -" : `${row.progress}%`.padStart(4)
  const since = row.startTime === undefined ? "" : `  ${humanDuration(now - row.startTime)}`
  return [name, seg("Pulling  ", "cyan"), seg(progress), seg(since, "dim"), seg(row.message ? `  ${row.message}` : "", "dim")]
}

/** `sha256:` and the first 12 hex digits, as `docker images` shortens ids. */
const shortDigest = (digest: string): string => {
  const colon = digest.indexOf(":")
  return colon < 0 ? digest.slice(0, 19) : digest.slice(0, colon + 13)
}

/** The digests the nodes resolved, and the DigestMismatch condition's message while it holds. */
const digestLines = (job: JobView): ReadonlyArray<ReadonlyArray<Segment>> => {
  const digests = job.digests ?? []
  const mismatch = job.digestMismatch
  if (digests.length === 0) return mismatch === undefined ? [] : [[seg("  DigestMismatch", "yellow")], [seg(`  ${mismatch}`, "yellow")]]
  const counts = digests.map((d) => `${shortDigest(d.digest)} on ${d.nodes} ${d.nodes === 1 ? "node" : "nodes"}`).join(", ")
  if (mismatch === undefined) return [[seg(`  digest ${counts}`, "dim")]]
  return [[seg("  DigestMismatch", "yellow"), seg(`  ${counts}`)], [seg(`  ${mismatch}`, "yellow")]]
}

const nodesWord = (n: number) => `${n} ${n === 1 ? "node" : "nodes"}`

/** `verb`: its singular and plural form, as the count takes it. */
const preloadedLine = (label: string, verb: readonly [string, string], says: string, group: PreloadedNodes): ReadonlyArray<Segment> => {
  const named = group.examples.map((e) => `${e.node} ${e.why}`).join(", ")
  const more = group.nodes - group.examples.length
  const counted = `${nodesWord(group.nodes)} ${group.nodes === 1 ? verb[0] : verb[1]} ${says}`
  return [seg(`  ${label}`, "yellow"), seg(`  ${counted}: ${named}${more > 0 ? `, +${more} more` : ""}`)]
}

/** The nodes whose kubelets let any pod start the job's private image, or make pods check their credentials at start (KEP-2535). */
const preloadedLines = (job: JobView): ReadonlyArray<ReadonlyArray<Segment>> => [
  ...(job.unverified === undefined
    ? []
    : [preloadedLine(preloadedImageUnverified, ["lets", "let"], "any pod start it without credentials", job.unverified)]),
  ...(job.reverified === undefined
    ? []
    : [
        preloadedLine(
          preloadedImageReverified,
          ["makes", "make"],
          "pods check their credentials with the registry at start",
          job.reverified
        )
      ])
]

/** The nodes by their kubelet's image verification policy, as their daemons read it. */
const policyLines = (policies: StatusModel["policies"]): ReadonlyArray<ReadonlyArray<Segment>> =>
  policies === undefined
    ? []
    : [[], [seg("kubelet image verification", "bold"), seg(`  ${policies.map((p) => `${p.policy} ${nodesWord(p.nodes)}`).join(", ")}`)]]

const jobLines = (job: JobView, now: number, width: number, mode: RenderMode): ReadonlyArray<ReadonlyArray<Segment>> => {
  const barWidth = mode === "plain" ? 20 : Math.max(10, Math.min(40, width - 70))
  const lines: Array<ReadonlyArray<Segment>> = [
    [
      seg(`${job.kind} `, "dim"),
      seg(job.name, "bold"),
      seg(job.target === "" ? "" : `  ${job.target}`),
      seg("  "),
      seg(job.phase, phaseStyle[job.phase]),
      seg(job.stage === undefined ? "" : `  ${job.stage}`, "cyan"),
      seg(job.parent === undefined ? "" : `  (of ${job.parent})`, "dim")
    ],
    [
      seg("  "),
      ...bar(job, barWidth, mode),
      seg(` ${percent(job)}  desired ${job.desired}  active ${job.active}  succeeded ${job.succeeded}  `),
      seg(`failed ${job.failed}`, job.failed > 0 ? "red" : undefined),
      seg(`  elapsed ${elapsed(job, now)}  eta ${eta(job, now)}`)
    ]
  ]
  if (job.message !== "") lines.push([seg(`  ${job.message}`, job.phase === "invalid" ? "red" : "dim")])
  if (job.seedingProblem !== undefined) lines.push([seg(`  ${job.seedingProblem}`, "yellow")])
  lines.push(...digestLines(job))
  lines.push(...preloadedLines(job))
  const shown = job.nodes.slice(0, maxNodeRows)
  const nameWidth = Math.max(0, ...shown.map((r) => r.node.length))
  for (const row of shown) lines.push(nodeLine(row, nameWidth, now))
  if (job.nodes.length > shown.length) lines.push([seg(`    +${job.nodes.length - shown.length} more nodes`, "dim")])
  return lines
}

/** The nodes held by the startup taint, each with what it still waits on. */
const warmingLines = (warming: ReadonlyArray<WarmingNode>, now: number): ReadonlyArray<ReadonlyArray<Segment>> => {
  if (warming.length === 0) return []
  const lines: Array<ReadonlyArray<Segment>> = [
    [],
    [seg(`nodes warming ${warming.length}`, "bold"), seg("  held by the startup taint until warm", "dim")]
  ]
  for (const node of warming) {
    const held = node.since === undefined ? "" : `  held ${humanDuration(Math.max(0, now - node.since))}`
    lines.push([seg(`  ${node.node}`, "bold"), seg(held, "dim"), seg(node.pulls.length === 0 ? "  nothing to pull yet" : "", "dim")])
    for (const pull of node.pulls.slice(0, maxNodeRows)) {
      const progress = pull.progress === undefined ? "" : `  ${pull.progress}%`
      const style: Style | undefined = pull.phase === "Failed" ? "red" : pull.phase === "Pulling" ? "cyan" : undefined
      lines.push([seg(`    ${pull.image}  `), seg(pull.phase, style), seg(progress), seg(pull.message ? `  ${pull.message}` : "", "dim")])
    }
    if (node.pulls.length > maxNodeRows) lines.push([seg(`    +${node.pulls.length - maxNodeRows} more images`, "dim")])
  }
  return lines
}

const iso = (now: number): string => new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * The whole view as lines, each at most `width` characters wide. Pure: the same model, time and
 * width always give the same lines, which is what the golden tests rely on.
 */
export const render = (model: StatusModel, now: number, width: number, mode: RenderMode): ReadonlyArray<string> => {
  const count = model.jobs.length
  const header: ReadonlyArray<Segment> = [
    seg(`namespace ${model.namespace}`, "bold"),
    seg(`  ${count} ${count === 1 ? "job" : "jobs"}  ${iso(now)}`, "dim")
  ]
  const body: Array<ReadonlyArray<Segment>> = []
  if (count === 0) {
    body.push([seg(model.job === undefined ? "no ImagePullJobs or ImageListPullJobs" : `no job named ${model.job}`)])
  }
  for (const job of model.jobs) body.push([], ...jobLines(job, now, width, mode))
  body.push(...warmingLines(model.warming ?? [], now))
  body.push(...policyLines(model.policies))
  return [header, ...body].map((segments) => toLine(segments, width, mode === "terminal"))
}
