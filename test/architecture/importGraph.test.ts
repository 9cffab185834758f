import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "../..")

/**
 * The tree's layers, top to bottom (README, Layout). A module may import its own layer and the
 * ones below it; roles do not import each other (the compositions are where they meet); only the
 * commands choose service bodies (layers/), and only they and the dev cluster embed the API server.
 */
const layers = [
  { name: "commands", rank: 5, prefixes: ["src/cli/", "src/main.ts"] },
  { name: "compositions", rank: 4, prefixes: ["src/dev/", "src/fleet/", "src/rollout/"] },
  { name: "roles", rank: 3, prefixes: ["src/controller/", "src/daemon/", "src/statusView/"] },
  { name: "bodies", rank: 2, prefixes: ["layers/", "apiserver/"] },
  { name: "services", rank: 1, prefixes: ["src/kube/", "src/cri/", "src/workqueue/", "src/ops/"] },
  { name: "model", rank: 0, prefixes: ["src/api/", "src/version.ts"] }
] as const

type Layer = (typeof layers)[number]

const layerOf = (file: string): Layer | undefined => layers.find((l) => l.prefixes.some((p) => file.startsWith(p)))

const sources = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

const importPattern = /^(?:import|export)\s[^;]*?from\s+"(\.[^"]+\.ts)"/gms

interface Edge {
  readonly from: string
  readonly to: string
}

const edges: ReadonlyArray<Edge> = ["src", "layers", "apiserver"]
  .flatMap(sources)
  .flatMap((from) =>
    [...readFileSync(join(root, from), "utf8").matchAll(importPattern)].map((m) => ({ from, to: normalize(join(dirname(from), m[1]!)) }))
  )

const top = (file: string) => file.split("/").slice(0, 2).join("/")

/** Why an edge breaks the layering, or undefined when it is allowed. */
const violation = ({ from, to }: Edge): string | undefined => {
  const a = layerOf(from)
  const b = layerOf(to)
  if (a === undefined) return `${from} is in no layer`
  if (b === undefined) return `${to} is in no layer`
  if (to.startsWith("layers/") && a.name !== "commands") return "only the commands choose service bodies"
  const embedders = ["apiserver/", "src/cli/", "src/main.ts", "src/dev/", "layers/"]
  if (to.startsWith("apiserver/") && !embedders.some((p) => from.startsWith(p))) {
    return "only the commands, the dev cluster and the in-memory KubeApi embed the API server"
  }
  if (from.startsWith("apiserver/") && to.startsWith("layers/")) return "the API server does not use service bodies"
  if (b.rank > a.rank) return `${a.name} import ${b.name}`
  if (a.name === "roles" && b.name === "roles" && top(from) !== top(to)) return "roles do not import each other"
  return undefined
}

describe("import graph", () => {
  it("finds the imports it checks", () => {
    expect(edges.length).toBeGreaterThan(500)
    expect(edges).toContainEqual({ from: "src/cli/controllerCommand.ts", to: "layers/kubeLive.ts" })
  })

  it("commands on top, then compositions, roles, service bodies, services and the API model", () => {
    const broken = edges.flatMap((edge) => {
      const why = violation(edge)
      return why === undefined ? [] : [`${edge.from} -> ${edge.to}: ${why}`]
    })
    expect(broken).toEqual([])
  })

  it("refuses what it should", () => {
    expect(violation({ from: "src/controller/role.ts", to: "layers/workQueues.ts" })).toBe("only the commands choose service bodies")
    expect(violation({ from: "src/daemon/pullEvents.ts", to: "src/controller/imagePullJob/decide.ts" })).toBe(
      "roles do not import each other"
    )
    expect(violation({ from: "src/kube/store.ts", to: "src/controller/stores.ts" })).toBe("services import roles")
    expect(violation({ from: "src/api/nodeImage.ts", to: "src/kube/KubeApi.ts" })).toBe("model import services")
    expect(violation({ from: "src/statusView/render.ts", to: "apiserver/tables/age.ts" })).toMatch(/embed the API server/)
    expect(violation({ from: "src/dev/devCluster.ts", to: "apiserver/embeddedApiServer.ts" })).toBeUndefined()
  })
})
