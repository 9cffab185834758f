/**
 * The shipped artifacts behave like the sources: the ESM bundle under Node 24 and Deno, and the
 * Node single executable. Builds them once (`npm run build`, `npm run build:bin`) unless
 * PREHEAT_SKIP_BUILD=1 says the caller has just built them.
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../", import.meta.url))
const bundle = join(root, "dist", "preheat.mjs")
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
let expected: { version: Run; crds: Run; unknown: Run }

beforeAll(() => {
  if (nodeMajor !== "24") {
    throw new Error(
      `vitest runs on Node ${process.versions.node} (${process.execPath}); run it through npm (npm test) so Node 24 from node_modules/.bin is used`
    )
  }
  if (process.env["PREHEAT_SKIP_BUILD"] === "1") {
    for (const path of [bundle, executable]) {
      if (!existsSync(path)) throw new Error(`PREHEAT_SKIP_BUILD=1 but ${path} is missing: run npm run build && npm run build:bin`)
    }
  } else {
    build("build")
    build("build:bin")
  }
  expected = {
    version: invoke(sources, "version"),
    crds: invoke(sources, "crds"),
    unknown: invoke(sources, "no-such-command")
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
    const whole = readFileSync(join(root, "dist", "preheat.cjs"), "utf8")
    for (const flag of ["warm-taint-key", "kubeconfig-out", "leader-election-namespace"]) {
      expect(whole).toContain(flag)
      expect(daemonOnly).not.toContain(flag)
    }
    expect(daemonOnly).toContain("runtime-socket")
  })
})

describe("what the bundles leave out (docs/benchmarks.md, daemon memory)", () => {
  it.each([bundle, join(root, "dist", "preheat.cjs"), join(root, "dist", "preheat-daemon.cjs")])(
    "%s has no undici (llhttp) and no client-node generated API",
    (path) => {
      const text = readFileSync(path, "utf8")
      expect(text).not.toContain("llhttp")
      expect(text).not.toContain("V1ObjectMeta")
      // client-node is there (it reads the kubeconfig); the requests go over node:http(s).
      expect(text).toContain("kubeconfig authentication")
    }
  )
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

  it("the bundle runs on Node 24 from a temp dir without node_modules or NODE_PATH", () => {
    const copy = join(dir, "preheat.mjs")
    copyFileSync(bundle, copy)
    expect(run(process.execPath, [copy, "version"], { cwd: dir, env: isolatedEnv() })).toEqual(expected.version)
  })
})
