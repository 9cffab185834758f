/**
 * deploy/components/eraser: rendered by kubectl's kustomize beside deploy/ alone. The controller gains
 * --eraser-exclusion-namespace (a flag it has), the RBAC of the rendered whole is exactly what
 * apiUsage.ts asks for, the component's uses included and scoped to the flag's namespace and the
 * list's one name, and nothing else changes.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, parseAllDocuments } from "yaml"
import { exclusionListName } from "../../src/controller/eraserExclusion/decide.ts"
import { hasKubectl, kubectlPath } from "../harness/apiserver/kubectlClient.ts"
import { apiUsage } from "./apiUsage.ts"
import type { Role } from "./apiUsage.ts"
import { expectedGrants, grantsOf } from "./rbacGrants.ts"

type Obj = Record<string, any>

const root = resolve(import.meta.dirname, "../..")
const componentDir = join(root, "deploy/components/eraser")
const flag = "--eraser-exclusion-namespace"

const render = (dir: string): Array<Obj> => {
  const result = spawnSync(kubectlPath, ["kustomize", dir], { encoding: "utf8", timeout: 60_000 })
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${result.stderr || result.error?.message}`)
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as Obj)
}

const workloadOf = (docs: ReadonlyArray<Obj>, role: Role): Obj => {
  const found = docs.filter((o) =>
    role === "controller"
      ? o.kind === "Deployment" && o.metadata?.name === "preheat-controller"
      : o.kind === "DaemonSet" && o.metadata?.name === "preheat-daemon"
  )
  expect(found).toHaveLength(1)
  return found[0]!
}
const argsOf = (docs: ReadonlyArray<Obj>, role: Role): Array<string> => workloadOf(docs, role).spec.template.spec.containers[0].args

/** `--a=1` and `--a 1` alike; the controller's defaults where the args say nothing. */
const flagValue =
  (docs: ReadonlyArray<Obj>) =>
  (role: Role, name: string): string => {
    const args = argsOf(docs, role)
    for (let i = 0; i < args.length; i++) {
      if (args[i] === `--${name}`) return args[i + 1]!
      if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3)
    }
    const fallback: Record<string, string> = { "secret-namespace": "preheat-daemon-config" }
    expect(fallback[name], `--${name} is given`).toBeDefined()
    return fallback[name]!
  }

let work: string
let base: Array<Obj>
let rendered: Array<Obj>

beforeAll(() => {
  if (!hasKubectl) return
  work = mkdtempSync(join(tmpdir(), "preheat-eraser-"))
  // deploy/components/README.md's layout: the user's kustomization beside preheat's checkout.
  symlinkSync(root, join(work, "preheat"))
  const site = join(work, "site")
  mkdirSync(site)
  writeFileSync(
    join(site, "kustomization.yaml"),
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../preheat/deploy\ncomponents:\n  - ../preheat/deploy/components/eraser\n"
  )
  base = render(join(root, "deploy"))
  rendered = render(site)
}, 120_000)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("the eraser component", () => {
  it("is a kustomize Component", () => {
    const kustomization = parse(readFileSync(join(componentDir, "kustomization.yaml"), "utf8")) as Obj
    expect(kustomization.apiVersion).toBe("kustomize.config.k8s.io/v1alpha1")
    expect(kustomization.kind).toBe("Component")
  })

  it("its flag is one `preheat controller` has", () => {
    const help = spawnSync(
      process.execPath,
      ["--experimental-strip-types", "--no-warnings", join(root, "src/main.ts"), "controller", "--help"],
      {
        encoding: "utf8",
        cwd: root,
        env: { ...process.env, NO_COLOR: "1" }
      }
    )
    expect(help.status, help.stderr).toBe(0)
    expect(help.stdout).toMatch(new RegExp(`^\\s+${flag}\\s+string\\s`, "m"))
  }, 60_000)
})

describe.skipIf(!hasKubectl)(`rendered with ${kubectlPath} kustomize`, () => {
  it("the controller gets the flag after its own args, naming eraser's namespace", () => {
    expect(argsOf(rendered, "controller")).toEqual([...argsOf(base, "controller"), `${flag}=eraser-system`])
    expect(argsOf(base, "controller").some((arg) => arg.startsWith(flag))).toBe(false)
  })

  it("RBAC grants exactly apiUsage.ts, the component's uses in the flag's namespace and for the list's one name", () => {
    const accounts = new Map<string, Role>(
      (["controller", "daemon"] as const).map((role) => {
        const workload = workloadOf(rendered, role)
        return [`${workload.metadata.namespace}/${workload.spec.template.spec.serviceAccountName}`, role]
      })
    )
    const granted = [...grantsOf(rendered, accounts)].sort()
    expect(granted).toEqual([...expectedGrants(apiUsage, flagValue(rendered))].sort())
    const component = [
      ...expectedGrants(
        apiUsage.filter((use) => use.component === "eraser"),
        flagValue(rendered)
      )
    ].sort()
    expect(component).toEqual([
      "controller create /configmaps @eraser-system",
      `controller delete /configmaps @eraser-system [${exclusionListName}]`,
      `controller list /configmaps @eraser-system [${exclusionListName}]`,
      `controller update /configmaps @eraser-system [${exclusionListName}]`,
      `controller watch /configmaps @eraser-system [${exclusionListName}]`
    ])
  })

  it("nothing else changes", () => {
    const added = rendered.filter((o) => !base.some((b) => b.kind === o.kind && b.metadata?.name === o.metadata?.name))
    expect(added.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      "Role eraser-system/preheat-controller-eraser-exclusion",
      "RoleBinding eraser-system/preheat-controller-eraser-exclusion"
    ])
    const withoutFlag = structuredClone(rendered.filter((o) => !added.includes(o)))
    const args = workloadOf(withoutFlag, "controller").spec.template.spec.containers[0].args as Array<string>
    args.pop()
    expect(withoutFlag).toEqual(base)
  })
})
