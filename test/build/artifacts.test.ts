/**
 * The shipped artifacts behave like the sources: the ESM bundles under Node 24 and Deno, and the
 * Node single executable; and each role's bundle holds only itself (build.ts's header). Builds them
 * once (`npm run build`, `npm run build:bin`) unless PREHEAT_SKIP_BUILD=1 says the caller has just
 * built them.
 */
import { spawn, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Metafile } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BuildError, harnessInputs, metaPathOf, refuseHarness } from "../../build.ts"

const root = fileURLToPath(new URL("../../", import.meta.url))
const bundle = join(root, "dist", "preheat.mjs")
const harnessBundle = join(root, "dist", "preheat-harness.mjs")
const executable = join(root, "dist", "preheat")
const deno = join(root, "node_modules", ".bin", "deno")
const pkgVersion = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version
const nodeMajor = process.versions.node.split(".")[0]

/** No update check: Deno may otherwise print "A new release of Deno is available" on stderr. */
const baseEnv: NodeJS.ProcessEnv = { ...process.env, DENO_NO_UPDATE_CHECK: "1" }

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run => {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? root,
    env: options.env ?? baseEnv,
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024
  })
  if (result.error) throw new Error(`cannot run ${command} ${args.join(" ")}: ${result.error.message}`)
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const build = (script: string): void => {
  const result = run("npm", ["run", "--silent", script])
  if (result.status !== 0) {
    throw new Error(`npm run ${script} exited ${result.status}:\n${result.stdout}\n${result.stderr}`)
  }
}

interface Runtime {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** `process.execPath` is Node 24 when vitest runs through npm (node_modules/.bin/node first on PATH); checked below. */
const sources: Runtime = {
  name: "sources on Node 24",
  command: process.execPath,
  args: ["--experimental-strip-types", "--no-warnings", "src/main.ts"]
}
const artifacts: ReadonlyArray<Runtime> = [
  { name: "bundle on Node 24", command: process.execPath, args: [bundle] },
  { name: "bundle on Deno", command: deno, args: ["run", "-A", bundle] },
  { name: "single executable", command: executable, args: [] }
]

const invoke = (runtime: Runtime, ...args: ReadonlyArray<string>): Run => run(runtime.command, [...runtime.args, ...args])

/** What the sources print: the reference every artifact must reproduce. */
let expected: { version: Run; crds: Run; unknown: Run; devHelp: Run }

/** `--log-level debug dev --help`: a harness's command after a flag (src/cli/treeFor.ts hands it over). */
const devHelp = ["--log-level", "debug", "dev", "--help"]

/**
 * Starts `preheat apiserver` (after a flag, as above) from `runtime`, asks the server it says it
 * listens on for the namespaces, stops it; the status of that answer.
 */
const apiserverAnswers = async (runtime: Runtime): Promise<number> => {
  const child = spawn(runtime.command, [...runtime.args, "--log-level", "info", "apiserver", "--port", "0"], {
    cwd: root,
    env: baseEnv,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  try {
    const url = await new Promise<string>((found, failed) => {
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const listening = /listening on (http:\/\/\S+)/.exec(out)
        if (listening !== null) found(listening[1]!)
      })
      child.stderr.on("data", (chunk: Buffer) => {
        out += chunk.toString()
      })
      child.once("exit", (code) => failed(new Error(`apiserver exited ${code}: ${out}`)))
    })
    return (await fetch(`${url}/api/v1/namespaces`)).status
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

beforeAll(() => {
  if (nodeMajor !== "24") {
    throw new Error(
      `vitest runs on Node ${process.versions.node} (${process.execPath}); run it through npm (npm test) so Node 24 from node_modules/.bin is used`
    )
  }
  if (process.env["PREHEAT_SKIP_BUILD"] === "1") {
    for (const path of [bundle, harnessBundle, executable]) {
      if (!existsSync(path)) throw new Error(`PREHEAT_SKIP_BUILD=1 but ${path} is missing: run npm run build && npm run build:bin`)
    }
  } else {
    build("build")
    build("build:bin")
  }
  expected = {
    version: invoke(sources, "version"),
    crds: invoke(sources, "crds"),
    unknown: invoke(sources, "no-such-command"),
    devHelp: invoke(sources, ...devHelp)
  }
}, 300_000)

describe("sources (reference)", () => {
  it("vitest runs on Node 24, so process.execPath is the Node 24 binary", () => {
    expect(nodeMajor).toBe("24")
  })

  it("version prints the package version", () => {
    expect(expected.version).toEqual({ status: 0, stdout: `preheat ${pkgVersion}\n`, stderr: "" })
  })

  it("crds exits 0", () => {
    expect(expected.crds.status, expected.crds.stderr).toBe(0)
  })

  it("an unknown command exits 2 with a one-line stderr", () => {
    expect(expected.unknown.status).toBe(2)
    expect(expected.unknown.stdout).toBe("")
    expect(expected.unknown.stderr).toMatch(/^error: [^\n]+\n$/)
  })
})

describe.each(artifacts)("$name", (runtime) => {
  it("version prints the same as the sources", () => {
    expect(invoke(runtime, "version")).toEqual(expected.version)
  })

  it("crds prints the same as the sources", () => {
    const crds = invoke(runtime, "crds")
    expect(crds.status, crds.stderr).toBe(0)
    expect(crds.stdout).toBe(expected.crds.stdout)
  })

  it("an unknown command exits 2 with the same one-line stderr", () => {
    const unknown = invoke(runtime, "no-such-command")
    expect(unknown).toEqual(expected.unknown)
    expect(unknown.stderr.trimEnd().split("\n")).toHaveLength(1)
  })

  it("a harness's command after a flag prints the same as the sources", () => {
    expect(expected.devHelp.stdout).toContain("--nodes integer")
    expect(invoke(runtime, ...devHelp)).toEqual(expected.devHelp)
  })

  it("runs the embedded API server (the harness's bundle, handed over to)", async () => {
    expect(await apiserverAnswers(runtime)).toBe(200)
  })
})

describe("the single executable's daemon (src/seaMain.ts)", () => {
  it("runs `preheat daemon` from the daemon's own bundle, with the same command line as the sources", () => {
    for (const args of [
      ["daemon", "--help"],
      ["daemon", "--no-such-flag"]
    ]) {
      const fromSources = invoke(sources, ...args)
      expect(invoke({ name: "single executable", command: executable, args: [] }, ...args)).toEqual(fromSources)
    }
  })

  it("the daemon's bundle holds none of the other roles' or the harness's commands", () => {
    const daemonOnly = readFileSync(join(root, "dist", "preheat-daemon.cjs"), "utf8")
    const product = readFileSync(join(root, "dist", "preheat.cjs"), "utf8")
    for (const flag of ["warm-taint-key", "leader-election-namespace"]) {
      expect(product).toContain(flag)
      expect(daemonOnly).not.toContain(flag)
    }
    expect(daemonOnly).toContain("runtime-socket")
  })
})

/**
 * Strings of harness modules that minifying keeps (messages, a flag's name), one per part of the
 * harness: the embedded API server's server-side apply, the `apiserver` command and what it runs,
 * the dev cluster, the fleet, the simulated runtime (once in the product, issue 38).
 */
const harnessMarkers = [
  "Apply failed with",
  "kubeconfig-out",
  "preheat apiserver listening on",
  "names a digest, which cannot move",
  "preheat-fleet/",
  "simulated runtime is unavailable"
]
const roleBundles = ["preheat.mjs", "preheat.cjs", "preheat-daemon.cjs"]
const harnessBundles = ["preheat-harness.mjs", "preheat-harness.cjs"]
const dist = (name: string) => join(root, "dist", name)
const metafileOf = (name: string): Metafile => JSON.parse(readFileSync(metaPathOf(dist(name)), "utf8")) as Metafile
const sourceFiles = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(root, dir, f))

describe("each role ships only itself (build.ts)", () => {
  it("each marker is the harness's alone: in a module of harness/, in none of src/ or layers/", () => {
    const harness = sourceFiles("harness").map((f) => readFileSync(f, "utf8"))
    const product = [...sourceFiles("src"), ...sourceFiles("layers")].map((f) => readFileSync(f, "utf8"))
    for (const marker of harnessMarkers) {
      expect(
        harness.some((text) => text.includes(marker)),
        marker
      ).toBe(true)
      expect(
        product.filter((text) => text.includes(marker)),
        marker
      ).toEqual([])
    }
  })

  it.each(roleBundles)("dist/%s: no module of harness/ went in (esbuild's metafile), none of its markers is in the file", (name) => {
    const inputs = Object.keys(metafileOf(name).inputs)
    expect(inputs).toContain(name === "preheat-daemon.cjs" ? "src/daemonMain.ts" : "src/main.ts")
    expect(harnessInputs(metafileOf(name))).toEqual([])
    const text = readFileSync(dist(name), "utf8")
    expect(harnessMarkers.filter((marker) => text.includes(marker))).toEqual([])
  })

  it.each(harnessBundles)("dist/%s holds the harness: its modules in the metafile, every marker in the file", (name) => {
    expect(harnessInputs(metafileOf(name))).toEqual(
      expect.arrayContaining([
        "harness/main.ts",
        "harness/apiserver/patches/apply/conflictFailure.ts",
        "harness/cluster/devCluster.ts",
        "harness/fleet/fleet.ts",
        "harness/layers/simulatedRuntime/SimulatedRuntime.ts"
      ])
    )
    const text = readFileSync(dist(name), "utf8")
    expect(harnessMarkers.filter((marker) => !text.includes(marker))).toEqual([])
  })

  it("the build refuses a role's bundle that holds a module of harness/", () => {
    expect(() => refuseHarness(metafileOf("preheat.mjs"), dist("preheat.mjs"))).not.toThrow()
    expect(() => refuseHarness(metafileOf("preheat-harness.cjs"), dist("preheat.cjs"))).toThrow(BuildError)
    expect(() => refuseHarness(metafileOf("preheat-harness.cjs"), dist("preheat.cjs"))).toThrow(
      /dist\/preheat\.cjs holds modules of harness\/.*harness\/apiserver\/embeddedApiServer\.ts/
    )
  })
})

describe("what the bundles leave out (docs/benchmarks.md, daemon memory)", () => {
  it.each([...roleBundles, ...harnessBundles].map(dist))("%s has no undici (llhttp) and no client-node generated API", (path) => {
    const text = readFileSync(path, "utf8")
    expect(text).not.toContain("llhttp")
    expect(text).not.toContain("V1ObjectMeta")
    // client-node is there (it reads the kubeconfig); the requests go over node:http(s).
    expect(text).toContain("kubeconfig authentication")
  })
})

describe("self-contained artifacts", () => {
  let dir = ""
  /** No NODE_PATH, no node_modules/.bin on PATH, a cwd with no node_modules above it. */
  const isolatedEnv = (): NodeJS.ProcessEnv => ({ PATH: "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" })

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "preheat-artifacts-"))
  })
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it("the executable runs from a temp dir without node_modules or NODE_PATH", () => {
    const copy = join(dir, "preheat")
    copyFileSync(executable, copy)
    const env = isolatedEnv()
    expect(env["NODE_PATH"]).toBeUndefined()
    expect(run(copy, ["version"], { cwd: dir, env })).toEqual(expected.version)
    expect(run(executable, ["version"], { cwd: dir, env })).toEqual(expected.version)
  })

  it("the two ESM bundles run on Node 24 from a temp dir without node_modules or NODE_PATH", () => {
    const copy = join(dir, "preheat.mjs")
    copyFileSync(bundle, copy)
    copyFileSync(harnessBundle, join(dir, "preheat-harness.mjs"))
    expect(run(process.execPath, [copy, "version"], { cwd: dir, env: isolatedEnv() })).toEqual(expected.version)
    expect(run(process.execPath, [copy, ...devHelp], { cwd: dir, env: isolatedEnv() })).toEqual(expected.devHelp)
  })

  it("the product's bundle copied alone runs the product, and says in one line that the harness's is missing", () => {
    const alone = mkdtempSync(join(dir, "alone-"))
    const copy = join(alone, "preheat.mjs")
    copyFileSync(bundle, copy)
    expect(run(process.execPath, [copy, "version"], { cwd: alone, env: isolatedEnv() })).toEqual(expected.version)
    const dev = run(process.execPath, [copy, "dev", "--help"], { cwd: alone, env: isolatedEnv() })
    expect(dev.status).toBe(1)
    expect(dev.stdout).toBe("")
    expect(dev.stderr).toMatch(/^error: cannot load the harness's commands: .*preheat-harness\.mjs[^\n]*\n$/)
  })
})
