import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { version } from "../../src/version.ts"
import { rawControls } from "../support/hostileText.ts"

const main = join(import.meta.dirname, "../../src/main.ts")
const preheat = (...args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", main, ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" }
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("preheat command line", () => {
  it("version prints the package version", () => {
    expect(preheat("version")).toEqual({ code: 0, stdout: `preheat ${version}\n`, stderr: "" })
  })

  it("crds prints the four CRDs as YAML documents", () => {
    const { code, stdout } = preheat("crds")
    expect(code).toBe(0)
    const documents = parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string } })
    expect(documents.map((d) => [d.kind, d.metadata.name])).toEqual([
      ["CustomResourceDefinition", "imagepulljobs.apps.kruise.io"],
      ["CustomResourceDefinition", "imagelistpulljobs.apps.kruise.io"],
      ["CustomResourceDefinition", "nodeimages.apps.kruise.io"],
      ["CustomResourceDefinition", "advancedcronjobs.apps.kruise.io"]
    ])
  })

  it.each([[[]], [["crds"]], [["version"]]])("--help works on %j", (path) => {
    const { code, stdout } = preheat(...path, "--help")
    expect(code).toBe(0)
    expect(stdout).toContain("USAGE")
    expect(stdout).toContain(["preheat", ...path].join(" "))
  })

  it("--help names both API versions served, as upstream's CRDs", () => {
    const { stdout } = preheat("--help")
    expect(stdout.replace(/\s+/g, " ")).toContain("NodeImage of apps.kruise.io v1alpha1 and v1beta1")
  })

  it("daemon --help lists --pin-images (a switch, off unless given)", () => {
    const { code, stdout } = preheat("daemon", "--help")
    expect(code).toBe(0)
    expect(stdout).toMatch(/--pin-images\s+Keep the images Never jobs want here out of the kubelet's image GC/)
  })

  it.each([
    [["bogus"], 'error: Unknown subcommand "bogus" for "preheat". See \'preheat --help\'.\n'],
    [["crds", "--nope"], "error: Unrecognized flag: --nope in command preheat crds. See 'preheat crds --help'.\n"],
    [["version", "--out"], "error: Unrecognized flag: --out in command preheat version. See 'preheat version --help'.\n"]
  ])("%j is a one-line usage error with exit code 2", (args, message) => {
    expect(preheat(...args)).toEqual({ code: 2, stdout: "", stderr: message })
  })

  it("a usage error repeats the argument escaped", () => {
    expect(preheat("bogus\x1b]0;pwned\x07\u202e")).toEqual({
      code: 2,
      stdout: "",
      stderr: 'error: Unknown subcommand "bogus\\x1b]0;pwned\\a\\u202e" for "preheat". See \'preheat --help\'.\n'
    })
  })

  it("a failure's message repeats what the user gave escaped", () => {
    const { code, stderr } = preheat("status", "--kubeconfig", "/nonexistent\x1b]0;pwned\x07\u202e")
    expect(code).toBe(1)
    expect(stderr).toContain("/nonexistent\\x1b]0;pwned\\a\\u202e")
    expect(rawControls(stderr)).toEqual([])
  })
})
