import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../..")

const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

/** A top-level `let` or `var`. */
const variable = /^(?:export\s+)?(?:let|var)\s+(\w+)/gm
/** A top-level collection, with its declared type if any (which may span to the `=` of the line). */
const collection = /^(?:export\s+)?const\s+(\w+)\s*(?::([^\n]*?))?=\s*new\s+(Map|WeakMap|Set|WeakSet)\b/gm

/**
 * State at module level is shared by every instance in the process (two controllers in one test,
 * the API server and its clients), outlives them and is invisible in their signatures: it belongs
 * to whoever runs (a store, a controller context, a server). Constants are fine: a top-level
 * collection is allowed when its type says it is read-only.
 */
const declarations = (file: string): Array<string> => {
  const text = readFileSync(join(root, file), "utf8")
  const found: Array<string> = []
  for (const m of text.matchAll(variable)) found.push(`${file}: let/var ${m[1]}`)
  for (const m of text.matchAll(collection)) {
    if (m[2]?.trim().startsWith("Readonly") !== true) found.push(`${file}: new ${m[3]} ${m[1]}`)
  }
  return found
}

describe("module state", () => {
  it("no module under src/, layers/ or harness/ keeps mutable state at its top level", () => {
    const files = ["src", "layers", "harness"].flatMap(sources)
    expect(files.length).toBeGreaterThan(100)
    expect(files.flatMap(declarations)).toEqual([])
  })

  it("finds what it looks for", () => {
    const found = (text: string) => [...text.matchAll(variable), ...text.matchAll(collection)].map((m) => m[1])
    expect(found("let a = 1\nexport var b\nconst c = new Map()\nexport const d = new WeakSet<object>()")).toEqual(["a", "b", "c", "d"])
    expect(found("const e: Map<string, () => void> =\n  new Map()")).toEqual(["e"])
    expect(found("  let inner = 1\nconst f = new Set(\n  [1]\n)")).toEqual(["f"])
  })
})
