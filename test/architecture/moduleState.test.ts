import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../..")

const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

/** A top-level `let` or `var`. */
const variable = /^(?:export\s+)?(?:let|var)\s+(\w+)/gm
/**
 * A top-level `const` made with `new` (a collection, a pool, an agent: whatever the instance
 * keeps), with its declared type if any (which may span to the `=` of the line) and the start of
 * its arguments.
 */
const collection = /^(?:export\s+)?const\s+(\w+)\s*(?::([^\n]*?))?=\s*new\s+([\w.]+)\b[^(\n]*\(([^\n]*)/gm

/** Instances that keep nothing that changes: a regular expression without flags (no lastIndex), an error value. */
const stateless = (made: string, args: string): boolean => (made === "RegExp" && !args.includes(",")) || made === "ApiFailure"

/**
 * Process-wide on purpose, each for its reason (by file name, which a move keeps):
 * - frozenJson.ts `pool`: the embedded API server's intern pool. Pooled values are frozen, so every
 *   server's storage in the process may share them; what it holds is not observable (`intern`
 *   returns equal values either way), and it is bounded (two generations, valuePool.ts).
 */
const processWide: ReadonlySet<string> = new Set(["frozenJson.ts: new ValuePool pool"])

/**
 * State at module level is shared by every instance in the process (two controllers in one test,
 * the API server and its clients), outlives them and is invisible in their signatures: it belongs
 * to whoever runs (a store, a reconciler's books, a server). Constants are fine: a
 * top-level instance is allowed when its type says it is read-only or it keeps nothing that changes.
 */
const declarationsIn = (file: string, text: string): Array<string> => {
  const found: Array<string> = []
  for (const m of text.matchAll(variable)) found.push(`${file}: let/var ${m[1]}`)
  for (const m of text.matchAll(collection)) {
    if (m[2]?.trim().startsWith("Readonly") === true || stateless(m[3]!, m[4]!)) continue
    if (!processWide.has(`${basename(file)}: new ${m[3]} ${m[1]}`)) found.push(`${file}: new ${m[3]} ${m[1]}`)
  }
  return found
}

const declarations = (file: string): Array<string> => declarationsIn(file, readFileSync(join(root, file), "utf8"))

describe("module state", () => {
  it("no module under src/, layers/ or harness/ keeps mutable state at its top level", () => {
    const files = ["src", "layers", "harness"].flatMap(sources)
    expect(files.length).toBeGreaterThan(100)
    expect(files.flatMap(declarations)).toEqual([])
  })

  it("lets through only read-only types, stateless instances and the listed process-wide ones", () => {
    const kept = (file: string, text: string) => declarationsIn(file, text).map((found) => found.split(" ").at(-1))
    expect(
      kept("src/x.ts", 'const a: ReadonlyMap<string, number> = new Map()\nconst b = new RegExp(pattern)\nconst c = new RegExp(p, "g")')
    ).toEqual(["c"])
    expect(kept("harness/apiserver/storage/frozenJson.ts", "const pool = new ValuePool()")).toEqual([])
    expect(kept("src/kube/other.ts", "const pool = new ValuePool()")).toEqual(["pool"])
  })

  it("finds what it looks for", () => {
    const found = (text: string) => [...text.matchAll(variable), ...text.matchAll(collection)].map((m) => m[1])
    expect(found("let a = 1\nexport var b\nconst c = new Map()\nexport const d = new WeakSet<object>()")).toEqual(["a", "b", "c", "d"])
    expect(found("const e: Map<string, () => void> =\n  new Map()")).toEqual(["e"])
    expect(found("  let inner = 1\nconst f = new Set(\n  [1]\n)")).toEqual(["f"])
    // Any instance, not only collections: a pool, an agent, a cache of one's own.
    expect(found("const pool = new ValuePool()\nexport const agent = new http.Agent({ keepAlive: true })")).toEqual(["pool", "agent"])
    expect(found("const cache = new LruCache<string, number>(100)")).toEqual(["cache"])
  })
})
