import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { version } from "../../src/version.ts"
import { rawControls } from "../support/hostileText.ts"

const main = join(import.meta.dirname, "../../src/main.ts")
/** The tree of every command, as the harness's bundle runs it. */
const everyCommand = join(import.meta.dirname, "../../harness/main.ts")
const runEntry = (entry: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", entry, ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" }
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
const preheat = (...args: ReadonlyArray<string>) => runEntry(main, args)

/** The modules of this repository (paths from its root) that `preheat ...args` evaluates. */
const modulesEvaluated = (...args: ReadonlyArray<string>): Array<string> => {
  const hook =
    'import { registerHooks } from "node:module"; registerHooks({ load(url, context, next) { ' +
    'if (url.startsWith("file:")) process.stderr.write("evaluated " + url + "\\n"); return next(url, context) } })'
  const result = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, "--experimental-strip-types", "--no-warnings", main, ...args],
    { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } }
  )
  expect(result.status).toBe(0)
  const root = `${pathToFileURL(join(import.meta.dirname, "../..")).href}/`
  return result.stderr
    .split("\n")
    .filter((line) => line.startsWith(`evaluated ${root}`) && !line.includes("/node_modules/"))
    .map((line) => line.slice(`evaluated ${root}`.length))
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

  it("the roles and --help evaluate none of the harness (the simulated runtime included); dev --help only the harness's flags", () => {
    const controller = modulesEvaluated("controller", "--help")
    expect(controller).toContain("src/controller/role.ts")
    expect(controller.filter((m) => m.startsWith("harness/") || m.startsWith("layers/cri/"))).toEqual([])
    const daemon = modulesEvaluated("daemon", "--help")
    expect(daemon).toContain("layers/cri/live/criLive.ts")
    expect(daemon.filter((m) => m.startsWith("harness/"))).toEqual([])
    const help = modulesEvaluated("--help")
    expect(help).toContain("src/cli/harnessListing.ts")
    expect(help.filter((m) => m.startsWith("harness/"))).toEqual([])
    expect(modulesEvaluated("version").filter((m) => m.startsWith("harness/"))).toEqual([])
    const dev = modulesEvaluated("dev", "--help")
    expect(dev.filter((m) => m.startsWith("harness/")).sort()).toEqual([
      "harness/cli/apiserverCommand.ts",
      "harness/cli/devCommand.ts",
      "harness/cli/fleetCommand.ts",
      "harness/cli/simulatedDaemonCommand.ts",
      "harness/commands.ts",
      "harness/main.ts"
    ])
    // Handed over before anything of the product's tree is loaded.
    expect(dev.filter((m) => m.startsWith("src/")).slice(0, 2)).toEqual(["src/main.ts", "src/cli/treeFor.ts"])
    expect(dev).not.toContain("src/cli/runProduct.ts")
  })

  it("a harness's command after a flag is handed over to every command (preheat --log-level debug dev)", () => {
    const dev = preheat("--log-level", "debug", "dev", "--help")
    expect(dev.code).toBe(0)
    expect(dev.stdout).toContain("--nodes integer")
    expect(modulesEvaluated("--log-level", "debug", "dev", "--help")).toContain("harness/cli/devCommand.ts")
    expect(preheat("--log-level=debug", "apiserver", "--help").stdout).toContain("--kubeconfig-out")
  })

  it.each([[[]], [["--help"]], [["-h"]], [["--version"]], [["-v"]], [["version"]]])(
    "the product's tree prints for %j what the tree of every command prints",
    (args) => {
      expect(preheat(...args)).toEqual(runEntry(everyCommand, args))
    }
  )

  it("lists the harness's commands apart", () => {
    const { stdout } = preheat("--help")
    expect(stdout).toMatch(/Local clusters and tests \(the harness\):\n\s+apiserver\s.*\n\s+dev\s.*\n\s+fleet\s.*\n\s+simulated-daemon\s/)
  })

  it("the simulated runtime is the harness's: simulated-daemon takes the daemon's flags but the runtime's, daemon has no --simulated-runtime", () => {
    const flagsOf = (help: string) => [...help.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1])
    const daemon = preheat("daemon", "--help")
    const simulated = preheat("simulated-daemon", "--help")
    expect(simulated.code).toBe(0)
    expect(flagsOf(daemon.stdout)).toContain("--pin-images")
    expect(flagsOf(simulated.stdout)).toEqual(flagsOf(daemon.stdout).filter((f) => f !== "--runtime-socket" && f !== "--host-run-dir"))
    expect(preheat("daemon", "--simulated-runtime", "--node-name", "n1")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Unrecognized flag: --simulated-runtime")
    })
  })

  it("daemon --help lists --pin-images (a switch, off unless given)", () => {
    const { code, stdout } = preheat("daemon", "--help")
    expect(code).toBe(0)
    expect(stdout).toMatch(/--pin-images\s+Keep the images Never jobs want here out of the kubelet's image GC/)
  })

  it("daemon and simulated-daemon: a credential provider config the kubelet would refuse stops it, naming file, provider and field (OpenKruise's flag names too)", () => {
    const dir = mkdtempSync(join(tmpdir(), "preheat-cli-providers-"))
    const kubeconfig = join(dir, "kubeconfig")
    writeFileSync(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
    )
    const config = join(dir, "providers.yaml")
    writeFileSync(
      config,
      "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n" +
        "  - {name: ecr, matchImages: ['*.dkr.ecr.*.amazonaws.com'], defaultCacheDuration: 12h, apiVersion: credentialprovider.kubelet.k8s.io/v2}\n"
    )
    const expected =
      `error: invalid credential provider config: ${config}: provider "ecr" (providers[0]): apiVersion: Unsupported value: ` +
      '"credentialprovider.kubelet.k8s.io/v2": supported values: "credentialprovider.kubelet.k8s.io/v1", ' +
      '"credentialprovider.kubelet.k8s.io/v1alpha1", "credentialprovider.kubelet.k8s.io/v1beta1"\n'
    // The config is read before the runtime is dialled: the socket need not exist.
    for (const command of [["daemon", "--runtime-socket", join(dir, "no.sock")], ["simulated-daemon"]]) {
      const common = [...command, "--node-name", "n1", "--kubeconfig", kubeconfig]
      for (const flags of [
        ["--image-credential-provider-config", config, "--image-credential-provider-bin-dir", dir],
        ["--plugin-config-file", config, "--plugin-bin-dir", dir]
      ]) {
        expect(preheat(...common, ...flags)).toEqual({ code: 1, stdout: "", stderr: expected })
      }
      expect(preheat(...common, "--plugin-config-file", config)).toMatchObject({
        code: 1,
        stderr:
          "error: --image-credential-provider-config needs --image-credential-provider-bin-dir (the directory of the plugins it names)\n"
      })
    }
  })

  it("daemon --help lists --kubelet-config with its default and --kubelet-config-dir; allowlist --help its jobs and -n", () => {
    const daemon = preheat("daemon", "--help").stdout.replace(/\s+/g, " ")
    expect(daemon).toContain("--kubelet-config string The kubelet's configuration file (its --config)")
    expect(daemon).toContain("(default /var/lib/kubelet/config.yaml)")
    expect(daemon).toContain("--kubelet-config-dir string")
    const allowlist = preheat("allowlist", "--help")
    expect(allowlist.code).toBe(0)
    expect(allowlist.stdout).toContain("preheat allowlist [flags] [<job...>]")
    expect(allowlist.stdout).toMatch(/--namespace, -n string/)
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

  it("controller: a bad --warm-taint-key or --warm-timeout is refused before anything starts", () => {
    expect(preheat("controller", "--warm-taint-key", "not a key!", "--kubeconfig", "/nonexistent")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('invalid argument "not a key!" for "--warm-taint-key" flag: a taint key is a qualified name')
    })
    expect(preheat("controller", "--warm-timeout", "0s", "--kubeconfig", "/nonexistent")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('invalid argument "0s" for "--warm-timeout" flag')
    })
  })

  it("controller: a bad --seed-nodes is refused before anything starts", () => {
    expect(preheat("controller", "--seed-nodes", "half", "--kubeconfig", "/nonexistent")).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'invalid argument "half" for "--seed-nodes" flag: a count of nodes (0 to 999999999) or a percentage of the job\'s nodes (0% to 100%)'
      )
    })
  })

  it("a port out of range is refused as the flags are read, naming the flag, not with node:net's RangeError at the listen", () => {
    for (const [role, flag] of [
      ["controller", "--metrics-port"],
      ["daemon", "--metrics-port"]
    ] as const) {
      const result = preheat(role, flag, "70000", "--kubeconfig", "/nonexistent")
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain(`Invalid value for flag ${flag}: "70000". Expected: a port from 0 (a free one) to 65535.`)
      expect(result.stderr).not.toContain("RangeError")
    }
    const dev = runEntry(everyCommand, ["dev", "--port", "-1"])
    expect(dev.code, dev.stderr).toBe(2)
    expect(dev.stderr).toContain('Invalid value for flag --port: "-1". Expected: a port from 0 (a free one) to 65535.')
  })
})
