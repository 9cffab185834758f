import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

// docs/spec.md is the reference (issue 38): every Event reason, Condition type and reason, and
// metric the product emits is written there. Read from the sources, not from a running role, so
// a reason added in any file is caught without knowing where it is emitted.

const root = join(import.meta.dirname, "../..")

const sourcesUnder = (dirs: ReadonlyArray<string>): ReadonlyArray<{ readonly file: string; readonly text: string }> =>
  dirs.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .map((f) => ({ file: join(dir, f), text: readFileSync(join(root, dir, f), "utf8") }))
  )

/** A reason or condition type: one CamelCase word, as metav1.Condition and core/v1 Event want it. */
const word = /"([A-Z][A-Za-z0-9]*)"/g
/** `const name = "Word"`: constants that reasons and condition types are given through. */
const constant = /\bconst\s+(\w+)\s*=\s*"([A-Z][A-Za-z0-9]*)"/g
/**
 * What follows `reason:` or `reason =` (also `...Reason =`), up to the end of the expression: its
 * CamelCase literals (`"Completed"`, a ternary's two, a union's) and identifiers (constants). Not
 * `reason?:` (an optional field of an interface: the CRD rules' own `reason`) nor `===`.
 */
const reasonExpression = /reason\s*(?::|=(?!=))\s*([^,;\n})]*)/gi
/**
 * A condition as the controllers build it: its type, then its status; or a table of conditions
 * (`{ type: preloadedImageUnverified, trueReason: ... }`): its type, then a reason of its own.
 */
const conditionType = /\btype:\s*(?:"([A-Z][A-Za-z0-9]*)"|([A-Za-z_]\w*)),\s*(?:status:\s*"(?:True|False|Unknown)"|[a-z]\w*Reason:)/g
/** An Event given a condition's type as its reason (`reason: kind.type`): the file's condition types. */
const conditionTypeAsReason = /^\s*[A-Za-z_]\w*\.type\s*$/
const metricName = /\bname:\s*"(preheat_[a-z_]+)"/g

interface Emitted {
  readonly reasons: ReadonlyMap<string, string>
  readonly conditionTypes: ReadonlyMap<string, string>
  readonly metrics: ReadonlyMap<string, string>
}

/** What the product can emit, each with the first file that says it. */
const emitted = (sources: ReadonlyArray<{ readonly file: string; readonly text: string }>): Emitted => {
  const constants = new Map<string, string>()
  for (const { text } of sources) for (const m of text.matchAll(constant)) constants.set(m[1]!, m[2]!)
  const reasons = new Map<string, string>()
  const conditionTypes = new Map<string, string>()
  const metrics = new Map<string, string>()
  const add = (into: Map<string, string>, name: string | undefined, file: string) => {
    if (name !== undefined && !into.has(name)) into.set(name, file)
  }
  for (const { file, text } of sources) {
    const typesHere = [...text.matchAll(conditionType)].map((m) => m[1] ?? constants.get(m[2]!))
    for (const m of text.matchAll(reasonExpression)) {
      const expression = m[1]!
      if (conditionTypeAsReason.test(expression)) for (const type of typesHere) add(reasons, type, file)
      for (const literal of expression.matchAll(word)) add(reasons, literal[1], file)
      // A name read as a value: not an object whose member is read (`kind.trueReason`), nor that member.
      for (const identifier of expression.matchAll(/(?<![.\w])[A-Za-z_]\w*\b(?!\s*\.)/g)) add(reasons, constants.get(identifier[0]), file)
    }
    for (const m of text.matchAll(conditionType)) add(conditionTypes, m[1] ?? constants.get(m[2]!), file)
    for (const m of text.matchAll(metricName)) add(metrics, m[1], file)
  }
  return { reasons, conditionTypes, metrics }
}

const spec = (): string => readFileSync(join(root, "docs/spec.md"), "utf8")

/** The text of the `## {heading}` section, up to the next `## `. */
const section = (text: string, heading: RegExp): string => {
  const lines = text.split("\n")
  const start = lines.findIndex((l) => l.startsWith("## ") && heading.test(l))
  if (start < 0) throw new Error(`docs/spec.md has no section ${heading}`)
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "))
  return lines.slice(start, end < 0 ? undefined : end).join("\n")
}

const cellsOf = (line: string): ReadonlyArray<string> =>
  line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.trim())

const isSeparator = (cells: ReadonlyArray<string> | undefined): boolean => cells?.every((c) => /^-+$/.test(c)) === true

/** The cells of a section's table rows: the header (the row above the separator) and the separator left out. */
const tableRows = (text: string): ReadonlyArray<ReadonlyArray<string>> => {
  const rows = text
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .map(cellsOf)
  return rows.filter((cells, i) => !isSeparator(cells) && !isSeparator(rows[i + 1]))
}

const backticked = (cell: string): string | undefined => /^`([A-Za-z0-9]+)`$/.exec(cell)?.[1]

const missing = (names: ReadonlyMap<string, string>, documented: (name: string) => boolean): ReadonlyArray<string> =>
  [...names].filter(([name]) => !documented(name)).map(([name, file]) => `${name} (${file})`)

describe("docs/spec.md", () => {
  const product = emitted(sourcesUnder(["src", "layers"]))
  // Only the harness's metrics (`preheat dev`'s /metrics): its simulated kubelets' and registry's
  // events are not the product's, and the spec's tables are the product's.
  const harnessMetrics = emitted(sourcesUnder(["harness"])).metrics
  const text = spec()
  const conditions = tableRows(section(text, /Conditions/))
  const events = tableRows(section(text, /Events/))

  it("finds what it checks in the sources (the patterns still match the code)", () => {
    // A few that are emitted in each of the ways the patterns read: a literal, a constant, a ternary.
    expect([...product.reasons.keys()]).toEqual(
      expect.arrayContaining(["Started", "RegistryThrottled", "DeadlineExceeded", "PullImageFailed"])
    )
    expect([...product.conditionTypes.keys()]).toEqual(expect.arrayContaining(["Complete", "DigestMismatch", "Valid"]))
    expect(product.metrics.has("preheat_pulls_total")).toBe(true)
    expect(conditions.length).toBeGreaterThan(10)
    expect(events.length).toBeGreaterThan(20)
  })

  it("names every Event and Condition reason the product gives", () => {
    expect(missing(product.reasons, (reason) => text.includes(`\`${reason}\``))).toEqual([])
  })

  it("lists every Condition type in its Conditions table, and only those", () => {
    const documented = new Set(conditions.map((cells) => backticked(cells[1] ?? "")))
    expect(missing(product.conditionTypes, (type) => documented.has(type))).toEqual([])
    expect([...documented].filter((type) => type === undefined || !product.conditionTypes.has(type))).toEqual([])
  })

  it("names in its Conditions and Events tables no reason the product no longer gives", () => {
    const conditionReasons = conditions.map((cells) => backticked(cells[3] ?? ""))
    const eventReasons = events.map((cells) => backticked(cells[0] ?? ""))
    expect([...conditionReasons, ...eventReasons].filter((reason) => reason === undefined || !product.reasons.has(reason))).toEqual([])
  })

  it("lists every Event reason in its Events table", () => {
    const documented = new Set(events.map((cells) => backticked(cells[0] ?? "")))
    // A reason the Conditions table gives may be a condition's alone (Valid, TagMoved, ...); every other one is an Event's.
    const conditionReasons = new Set(conditions.map((cells) => backticked(cells[3] ?? "")))
    const eventReasons = new Map([...product.reasons].filter(([reason]) => !conditionReasons.has(reason)))
    expect(missing(eventReasons, (reason) => documented.has(reason))).toEqual([])
  })

  it("names every metric the product registers, and those preheat dev adds", () => {
    expect(harnessMetrics.has("preheat_simulated_registry_served_bytes_total")).toBe(true)
    expect(missing(new Map([...product.metrics, ...harnessMetrics]), (name) => text.includes(`\`${name}`))).toEqual([])
  })
})
