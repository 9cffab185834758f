import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../..")

/**
 * The tree's layers, top to bottom (README, Layout). A module may import its own layer and the
 * ones below it; roles do not import each other (the compositions are where they meet); in the
 * product only the commands choose service bodies (layers/). The harness (harness/: the embedded
 * API server, the dev cluster, the fleet, the in-memory KubeApi and their commands) is built from
 * the product's parts; the product never imports it but for main.ts's one `import()` of its entry,
 * which the bundles turn into loading the harness's own bundle (build.ts, `loadedBeside`).
 */
const layers = [
  {
    name: "commands",
    rank: 5,
    prefixes: ["src/cli/", "src/main.ts", "src/daemonMain.ts", "src/seaMain.ts", "harness/cli/", "harness/commands.ts", "harness/main.ts"]
  },
  { name: "compositions", rank: 4, prefixes: ["src/rollout/", "harness/cluster/", "harness/fleet/"] },
  { name: "roles", rank: 3, prefixes: ["src/controller/", "src/daemon/", "src/statusView/", "src/allowlist/"] },
  { name: "bodies", rank: 2, prefixes: ["layers/", "harness/layers/", "harness/apiserver/"] },
  { name: "services", rank: 1, prefixes: ["src/kube/", "src/cri/", "src/workqueue/", "src/ops/"] },
  { name: "model", rank: 0, prefixes: ["src/api/", "src/version.ts"] },
  { name: "JSON values", rank: -1, prefixes: ["src/json/"] }
] as const

type Layer = (typeof layers)[number]

const layerOf = (file: string): Layer | undefined => layers.find((l) => l.prefixes.some((p) => file.startsWith(p)))

const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

/**
 * `import ... from "./x.ts"` and `export ... from "./x.ts"`; group 1 says whether only types are
 * imported. A match does not run on past the start of another statement (a package's import before it).
 */
const staticPattern = /^(?:import|export)\s((?:(?!^(?:import|export)\s)[^;])*?)from\s+"(\.[^"]+\.ts)"/gms
/** `import "./x.ts"`, for its effects only. */
const barePattern = /^import\s+"(\.[^"]+\.ts)"/gm
/** `import("./x.ts")`: evaluated when the call runs, not when the importing module is. */
const dynamicPattern = /\bimport\(\s*"(\.[^"]+\.ts)"\s*\)/g

interface Edge {
  readonly from: string
  readonly to: string
  /** Through `import()`. */
  readonly dynamic?: boolean
  /** `import type` / `export type`: erased, evaluates nothing. */
  readonly typeOnly?: boolean
}

const importsOf = (from: string, text: string): Array<Edge> => {
  const target = (specifier: string) => normalize(join(dirname(from), specifier))
  return [
    ...[...text.matchAll(staticPattern)].map((m) => ({
      from,
      to: target(m[2]!),
      ...(m[1]!.startsWith("type ") ? { typeOnly: true } : {})
    })),
    ...[...text.matchAll(barePattern)].map((m) => ({ from, to: target(m[1]!) })),
    ...[...text.matchAll(dynamicPattern)].map((m) => ({ from, to: target(m[1]!), dynamic: true }))
  ]
}

const edges: ReadonlyArray<Edge> = ["src", "layers", "harness"]
  .flatMap(sources)
  .flatMap((from) => importsOf(from, readFileSync(join(root, from), "utf8")))

const top = (file: string) => file.split("/").slice(0, 2).join("/")
const inHarness = (file: string) => file.startsWith("harness/")
/** The product's one way into the harness. */
const harnessEntry = { from: "src/main.ts", to: "harness/main.ts" }

/** Why an edge breaks the layering, or undefined when it is allowed. */
const violation = ({ from, to, dynamic = false }: Edge): string | undefined => {
  const a = layerOf(from)
  const b = layerOf(to)
  if (a === undefined) return `${from} is in no layer`
  if (b === undefined) return `${to} is in no layer`
  if (!inHarness(from) && inHarness(to)) {
    if (from !== harnessEntry.from || to !== harnessEntry.to) return "the product does not import the harness"
    if (!dynamic) return "main.ts loads the harness's entry only with import()"
  }
  if (to.startsWith("layers/") && !inHarness(from) && !from.startsWith("layers/") && a.name !== "commands") {
    return "only the commands choose service bodies"
  }
  const embedders = ["harness/apiserver/", "harness/cli/", "harness/cluster/", "harness/layers/"]
  if (to.startsWith("harness/apiserver/") && !embedders.some((p) => from.startsWith(p))) {
    return "only the harness's commands, the dev cluster and the in-memory KubeApi embed the API server"
  }
  if (from.startsWith("harness/apiserver/") && (to.startsWith("layers/") || to.startsWith("harness/layers/"))) {
    return "the API server does not use service bodies"
  }
  if (b.rank > a.rank) return `${a.name} import ${b.name}`
  if (a.name === "roles" && b.name === "roles" && top(from) !== top(to)) return "roles do not import each other"
  return undefined
}

/** The imports evaluated with the importing module: static ones, not of types only. */
const evaluated = (e: Edge): boolean => e.dynamic !== true && e.typeOnly !== true
/** The imports a bundle of the importing module holds: `import()` ones too (esbuild bundles them; build.ts's `loadedBeside` aside). */
const bundled = (e: Edge): boolean => e.typeOnly !== true

/**
 * The modules evaluated with `entry` (the imports `follow` says, transitively) that match
 * `forbidden`, each with the chain of imports that reaches it.
 */
const reachedFrom = (
  entry: string,
  forbidden: (file: string) => boolean,
  graph: ReadonlyArray<Edge> = edges,
  follow: (e: Edge) => boolean = evaluated
): Array<string> => {
  const next = new Map<string, Array<string>>()
  for (const e of graph) if (follow(e)) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  const via = new Map<string, string>([[entry, entry]])
  const queue = [entry]
  const found: Array<string> = []
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (forbidden(file)) found.push(via.get(file)!)
    for (const to of next.get(file) ?? []) {
      if (via.has(to)) continue
      via.set(to, `${via.get(file)} -> ${to}`)
      queue.push(to)
    }
  }
  return found
}

describe("import graph", () => {
  it("finds the imports it checks", () => {
    expect(edges.length).toBeGreaterThan(500)
    expect(edges).toContainEqual({ from: "src/cli/controllerCommand.ts", to: "layers/kube/live/kubeLive.ts" })
    expect(edges).toContainEqual({ ...harnessEntry, dynamic: true })
    expect(edges).toContainEqual({ from: "harness/cli/runSimulatedDaemon.ts", to: "harness/layers/simulatedRuntime/simulatedNode.ts" })
    expect(edges).toContainEqual({ from: "harness/cli/simulatedDaemonCommand.ts", to: "src/cli/daemonFlags.ts" })
    expect(edges).toContainEqual({ from: "harness/cli/runDev.ts", to: "harness/cli/devCommand.ts", typeOnly: true })
  })

  it("commands on top, then compositions, roles, service bodies, services and the API model; the product apart from the harness", () => {
    const broken = edges.flatMap((edge) => {
      const why = violation(edge)
      return why === undefined ? [] : [`${edge.from} -> ${edge.to}: ${why}`]
    })
    expect(broken).toEqual([])
  })

  it("the roles' commands evaluate none of the harness; the daemon's bundle holds none of it, the simulated runtime included", () => {
    expect(reachedFrom("src/main.ts", inHarness)).toEqual([])
    expect(reachedFrom("src/cli/roleOnlyCommand.ts", inHarness)).toEqual([])
    expect(reachedFrom("src/cli/controllerCommand.ts", (f) => inHarness(f) || f.startsWith("layers/cri/"))).toEqual([])
    expect(reachedFrom("src/cli/daemonCommand.ts", inHarness)).toEqual([])
    // Not even through import(): what the daemon's bundle is built from (build.ts refuses it too).
    expect(reachedFrom("src/daemonMain.ts", inHarness, edges, bundled)).toEqual([])
    // `preheat --help` lists the harness's commands without them; `preheat dev --help` evaluates their flags only.
    expect(reachedFrom("src/cli/harnessListing.ts", inHarness)).toEqual([])
    expect(reachedFrom("src/cli/runProduct.ts", inHarness)).toEqual([])
    const runs = ["harness/apiserver/", "harness/cluster/", "harness/fleet/", "harness/layers/", "harness/cli/run"]
    expect(reachedFrom("harness/main.ts", (f) => runs.some((p) => f.startsWith(p)))).toEqual([])
  })

  it("refuses what it should", () => {
    expect(violation({ from: "src/controller/role.ts", to: "layers/scheduler.ts" })).toBe("only the commands choose service bodies")
    expect(violation({ from: "src/daemon/pullEvents.ts", to: "src/controller/imagePullJob/decide.ts" })).toBe(
      "roles do not import each other"
    )
    expect(violation({ from: "src/kube/store.ts", to: "src/controller/stores.ts" })).toBe("services import roles")
    expect(violation({ from: "src/api/nodeImage.ts", to: "src/kube/KubeApi.ts" })).toBe("model import services")
    expect(violation({ from: "src/json/mergePatch.ts", to: "src/api/time.ts" })).toBe("JSON values import model")
    expect(violation({ from: "src/api/nodeImage.ts", to: "src/json/plainObject.ts" })).toBeUndefined()
    expect(violation({ from: "src/statusView/render.ts", to: "harness/apiserver/tables/age.ts" })).toBe(
      "the product does not import the harness"
    )
    expect(violation({ from: "layers/kube/live/kubeLive.ts", to: "harness/layers/inMemoryKubeApi.ts", dynamic: true })).toBe(
      "the product does not import the harness"
    )
    expect(violation({ from: "src/cli/daemonCommand.ts", to: "harness/main.ts", dynamic: true })).toBe(
      "the product does not import the harness"
    )
    expect(violation({ from: "src/main.ts", to: "harness/commands.ts", dynamic: true })).toBe("the product does not import the harness")
    expect(violation(harnessEntry)).toBe("main.ts loads the harness's entry only with import()")
    expect(violation({ ...harnessEntry, dynamic: true })).toBeUndefined()
    expect(violation({ from: "harness/fleet/fleet.ts", to: "harness/apiserver/embeddedApiServer.ts" })).toMatch(/embed the API server/)
    expect(violation({ from: "harness/cluster/devCluster.ts", to: "harness/apiserver/embeddedApiServer.ts" })).toBeUndefined()
    expect(violation({ from: "harness/apiserver/storage/store.ts", to: "layers/scheduler.ts" })).toBe(
      "the API server does not use service bodies"
    )
    expect(violation({ from: "harness/apiserver/storage/store.ts", to: "harness/cluster/devNodes.ts" })).toBe("bodies import compositions")
  })

  it("follows static imports only (a bundle's also import()), and names the chain", () => {
    const graph: ReadonlyArray<Edge> = [
      { from: "a.ts", to: "b.ts" },
      { from: "b.ts", to: "harness/x.ts" },
      { from: "a.ts", to: "harness/lazy.ts", dynamic: true },
      { from: "a.ts", to: "harness/types.ts", typeOnly: true }
    ]
    expect(reachedFrom("a.ts", inHarness, graph)).toEqual(["a.ts -> b.ts -> harness/x.ts"])
    expect(reachedFrom("a.ts", inHarness, graph, bundled)).toEqual(["a.ts -> harness/lazy.ts", "a.ts -> b.ts -> harness/x.ts"])
    expect(importsOf("src/main.ts", 'const m = await import("../harness/main.ts")')).toEqual([{ ...harnessEntry, dynamic: true }])
    expect(importsOf("src/x.ts", 'import type { Scope } from "effect"\nimport { d } from "./d.ts"')).toEqual([
      { from: "src/x.ts", to: "src/d.ts" }
    ])
    expect(importsOf("src/x.ts", 'import type { A } from "./a.ts"\nexport { b } from "./b.ts"\nimport "./c.ts"')).toEqual([
      { from: "src/x.ts", to: "src/a.ts", typeOnly: true },
      { from: "src/x.ts", to: "src/b.ts" },
      { from: "src/x.ts", to: "src/c.ts" }
    ])
  })
})
