import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../..")

const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

/** An exported value (not a type): `export const x`, `export function f`, `export class C`. */
const valueExport = /^export\s+(?:async\s+)?(?:const|let|function\*?|class|abstract\s+class)\s+(\w+)/gm
/** A name re-exported from another module: `export { a, type B } from "./x.ts"`. */
const reexport = /^export\s+\{([^}]*)\}\s*from\s+"\.[^"]+"/gm
/** An import or re-export of names; stops at the next statement (see importGraph.test.ts). */
const importClause = /^(?:import|export)\s+(?:type\s+)?((?:(?!^(?:import|export)\s)[^;])*?)\s*from\s+"(\.[^"]+\.ts)"/gms
const dynamicImport = /\bimport\(\s*"(\.[^"]+\.ts)"\s*\)/g

/** Names in `{ a, type B, c as d }`, as the module that exports them calls them. */
const namesIn = (braces: string): Array<string> =>
  braces
    .split(",")
    .map((part) =>
      part
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0]!
        .trim()
    )
    .filter((name) => name !== "")

/** The value exports of `exporters` that no other module (tests and benchmarks included) imports. */
const unusedExports = (exporters: ReadonlyArray<string>, importers: ReadonlyArray<string>, read: (file: string) => string) => {
  const used = new Map<string, Set<string>>()
  const everything = new Set<string>()
  const use = (file: string, name: string) => {
    let names = used.get(file)
    if (names === undefined) used.set(file, (names = new Set()))
    names.add(name)
  }
  for (const from of importers) {
    const text = read(from)
    const target = (specifier: string) => normalize(join(dirname(from), specifier))
    for (const m of text.matchAll(importClause)) {
      const clause = m[1]!
      const namespace = /^\*\s+as\s+(\w+)/.exec(clause)
      if (namespace !== null) {
        for (const access of text.matchAll(new RegExp(`\\b${namespace[1]}\\.(\\w+)`, "g"))) use(target(m[2]!), access[1]!)
      } else if (clause === "*") {
        everything.add(target(m[2]!))
      } else {
        for (const name of namesIn(/\{([^}]*)\}/.exec(clause)?.[1] ?? "")) use(target(m[2]!), name)
      }
    }
    // What a module loaded with import() is used for is read off at run time: all of it counts.
    for (const m of text.matchAll(dynamicImport)) everything.add(target(m[1]!))
  }
  return exporters.flatMap((file) => {
    if (everything.has(file)) return []
    const text = read(file)
    const names = [
      ...[...text.matchAll(valueExport)].map((m) => m[1]!),
      ...[...text.matchAll(reexport)].flatMap((m) => namesIn(m[1]!.replace(/\btype\s+\w+(\s+as\s+\w+)?/g, "")))
    ]
    return names.filter((name) => used.get(file)?.has(name) !== true).map((name) => `${file}: ${name}`)
  })
}

describe("exports", () => {
  it("a value is exported only if another module imports it", () => {
    const importers = [
      ...["src", "layers", "harness", "test", "bench", "build"].flatMap(sources),
      ...readdirSync(root).filter((f) => f.endsWith(".ts"))
    ]
    const exporters = ["src", "layers", "harness"].flatMap(sources)
    expect(exporters.every((f) => existsSync(join(root, f)))).toBe(true)
    expect(unusedExports(exporters, importers, (f) => readFileSync(join(root, f), "utf8"))).toEqual([])
  })

  it("refuses what it should", () => {
    const files: Record<string, string> = {
      "src/a.ts": 'export const used = 1\nexport const unused = 2\nexport function viaNamespace() {}\nexport { x, type Y } from "./x.ts"',
      "src/b.ts": 'import type { Scope } from "effect"\nimport { used } from "./a.ts"\nimport * as A from "./a.ts"\nA.viaNamespace()',
      "src/c.ts": "export class Lazy {}",
      "src/d.ts": 'const m = await import("./c.ts")'
    }
    const read = (f: string) => files[f]!
    expect(unusedExports(["src/a.ts", "src/c.ts"], Object.keys(files), read)).toEqual(["src/a.ts: unused", "src/a.ts: x"])
  })
})
