/**
 * Builds the shipped artifacts of preheat.
 *
 *   npm run build       -> dist/preheat.mjs          ESM bundle of the product (src/main.ts), for Node >= 22.19 and Deno
 *                          dist/preheat-harness.mjs  ESM bundle of every command (harness/main.ts), which the
 *                                                    product's loads from beside itself for the harness's commands
 *   npm run build:bin   -> dist/preheat.cjs          CommonJS bundle of the product (a SEA asset)
 *                          dist/preheat-daemon.cjs   CommonJS bundle of `preheat daemon` alone (a SEA asset)
 *                          dist/preheat-harness.cjs  CommonJS bundle of every command (a SEA asset)
 *                          dist/sea-main.cjs         the SEA main script, which runs one of the three
 *                          dist/preheat              Node 24 single executable application (SEA)
 *   both                -> dist/meta/NAME.json       esbuild's metafile of each bundle (its inputs, for analysis)
 *
 * Each role ships only itself: the product's and the daemon's bundles hold no module of harness/
 * (the embedded API server, the dev cluster, the fleet, the simulated runtime), and the build fails
 * if one does (`refuseHarness`). The two ESM files go together (nothing else is needed at run
 * time); the executable carries its three bundles and picks one by the command line
 * (src/cli/treeFor.ts).
 *
 * Run by Node 24 with type stripping (`node --experimental-strip-types build.ts <bundle|bin>`).
 * Prints one summary line per artifact; exits 2 on a usage error and 1 on any other failure.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { createRequire, isBuiltin } from "node:module"
import { tmpdir } from "node:os"
import { basename, dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { build, type BuildOptions, type Message, type Metafile, type Plugin } from "esbuild"

const root = dirname(fileURLToPath(import.meta.url))
const dist = join(root, "dist")
const entry = join(root, "src", "main.ts")
const harnessEntry = join(root, "harness", "main.ts")
const daemonEntry = join(root, "src", "daemonMain.ts")
const seaMainEntry = join(root, "src", "seaMain.ts")

export const bundlePath = join(dist, "preheat.mjs")
export const harnessBundlePath = join(dist, "preheat-harness.mjs")
export const cjsPath = join(dist, "preheat.cjs")
export const daemonCjsPath = join(dist, "preheat-daemon.cjs")
export const harnessCjsPath = join(dist, "preheat-harness.cjs")
export const seaMainPath = join(dist, "sea-main.cjs")
export const exePath = join(dist, "preheat")
/** esbuild's metafile of the bundle at `outfile`. */
export const metaPathOf = (outfile: string): string => join(dist, "meta", `${basename(outfile)}.json`)

const shebang = "#!/usr/bin/env node"
/** Node's SEA fuse; postject flips its trailing ":0" to ":1" so the binary looks for the blob. */
const seaFuse = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"
const seaResource = "NODE_SEA_BLOB"

export class BuildError extends Error {}

/**
 * In the ESM bundle, an `import` of a Node built-in (`import * as http from "node:http"`) makes
 * Node build that module's ESM facade, which reads every export, lazy getters included:
 * `http.WebSocket` loads Node's internal undici (0.7 MB of source; `import "node:http"` alone
 * takes a bare Node from 45 to 58 MiB RSS), `crypto.webcrypto` and others load theirs. Through
 * the banner's `require` a built-in is the plain CommonJS object, read only where the code uses
 * it (as in the SEA's CommonJS bundle). Only static imports are rewritten; `require()` calls
 * already are.
 */
export const builtinsThroughRequire: Plugin = {
  name: "builtins-through-require",
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/0-9]+$/ }, (args) =>
      args.kind === "import-statement" && isBuiltin(args.path) ? { path: args.path, namespace: "node-builtin" } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)})`,
      loader: "js"
    }))
  }
}

/**
 * preheat uses two names of @kubernetes/client-node. Its index also re-exports the generated API
 * (a class per Kubernetes model and API group), exec, attach, cp and more, and its config.js takes
 * two helpers from the generated index; esbuild cannot drop any of it (the package does not say it
 * is free of side effects), so every process evaluated 0.35 MB of it at start (docs/benchmarks.md,
 * "Daemon overhead and memory"). The bundles take the names from the modules that define them. A
 * name not listed here fails the build (esbuild: no matching export), so nothing goes missing silently.
 *
 * preheat sends every request over node:http(s) itself (layers/kube/live/transport.ts) and never
 * calls what client-node does with undici (its fetch, applySecurityAuthentication's dispatchers),
 * but client-node's config.js and the generated configuration import undici, which would bring
 * 0.74 MB evaluated at start and llhttp's WebAssembly (7 to 8 MiB of the daemon's RSS,
 * docs/benchmarks.md). The bundles get a module in its place whose every name throws when used,
 * so a change that reached undici would fail at once rather than silently weigh on every process.
 */
const clientNodeModules: Record<string, string> = {
  KubeConfig: "dist/config.js",
  bufferFromFileOrString: "dist/config.js"
}
const clientNodeGenerated: Record<string, string> = {
  createConfiguration: "./configuration.js",
  ServerConfiguration: "./servers.js"
}
const reexports = (names: Record<string, string>, prefix: string): string =>
  Object.entries(names)
    .map(([name, module]) => `export { ${name} } from ${JSON.stringify(prefix + module)}`)
    .join("\n")

/** undici's names as client-node imports them, each refusing to be used (see above). */
const undiciRefused = `
const refused = () => { throw new Error("preheat does not bundle undici: client-node's requests go over node:http(s) (layers/kube/live/transport.ts)") }
export const fetch = refused
export class Agent { constructor() { refused() } }
export class ProxyAgent { constructor() { refused() } }
`

export const clientNodeNarrowed: Plugin = {
  name: "client-node-narrowed",
  setup(build) {
    build.onResolve({ filter: /^@kubernetes\/client-node$/ }, (args) =>
      args.importer.includes("node_modules") ? undefined : { path: "index", namespace: "client-node-narrowed" }
    )
    build.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      /@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(args.importer)
        ? { path: "generated", namespace: "client-node-narrowed", pluginData: dirname(args.importer) }
        : undefined
    )
    build.onResolve({ filter: /^undici$/ }, (args) =>
      /@kubernetes[\\/]client-node[\\/]/.test(args.importer) ? { path: "undici", namespace: "client-node-narrowed" } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "client-node-narrowed" }, (args) =>
      args.path === "index"
        ? { contents: reexports(clientNodeModules, "@kubernetes/client-node/"), resolveDir: root, loader: "js" }
        : args.path === "undici"
          ? { contents: undiciRefused, loader: "js" }
          : { contents: reexports(clientNodeGenerated, ""), resolveDir: join(args.pluginData as string, "gen"), loader: "js" }
    )
  }
}

/**
 * Leaves `module` out of a bundle: the `import()` of it loads `file`, a bundle of its own in the
 * same directory, instead. A relative specifier is resolved against the importing file (its
 * import.meta.url in ESM, its path in CommonJS), so the pair works wherever it is copied together.
 * This is how the product's bundle hands over to the harness's (src/main.ts). Only `import()` is
 * rewritten: a static import of `module` would bundle it, and `refuseHarness` fail the build.
 */
export const loadedBeside = (module: string, file: string): Plugin => ({
  name: "loaded-beside",
  setup(build) {
    const name = basename(module).replace(/[.]/g, "\\.")
    build.onResolve({ filter: new RegExp(`/${name}$`) }, (args) =>
      args.kind === "dynamic-import" && resolve(args.resolveDir, args.path) === module ? { path: `./${file}`, external: true } : undefined
    )
  }
})

/** A module evaluated in its own bundle only when `import()` asks for it (`loadedBeside`). */
export interface Beside {
  readonly module: string
  readonly file: string
}

/**
 * esbuild options shared by every bundle. Nothing is external (but a bundle `loadedBeside`): the
 * artifacts run with no node_modules. Minified, no source map: a linked map would be a second file
 * to ship and only helps with `--enable-source-maps`, which costs start-up on every run; stack
 * traces of the CLI go through Effect's Cause rendering, which names the failing operation anyway.
 * The metafile lists what went into each bundle, its paths relative to the repository's root.
 */
export const commonOptions = (entryPoint: string, minify = true): BuildOptions => ({
  entryPoints: [entryPoint],
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node24",
  minify,
  sourcemap: false,
  legalComments: "eof",
  metafile: true,
  write: false,
  logLevel: "silent"
})

/** The modules of harness/ that went into a bundle, by its metafile. */
export const harnessInputs = (metafile: Metafile): Array<string> =>
  Object.keys(metafile.inputs).filter((path) => path.startsWith("harness/"))

/** Fails the build of a role's bundle that holds any of the harness (build.ts's header). */
export const refuseHarness = (metafile: Metafile, outfile: string): void => {
  const found = harnessInputs(metafile)
  if (found.length > 0) {
    throw new BuildError(`${relative(root, outfile)} holds modules of harness/, which only dist/preheat-harness.* may: ${found.join(", ")}`)
  }
}

/**
 * ESM cannot call `require`, but bundled CommonJS dependencies (ws, @grpc/grpc-js) do
 * `require("events")` etc.; esbuild's shim uses a `require` in scope when there is one.
 */
const esmBanner = [
  `import { createRequire as __preheatCreateRequire } from "node:module";`,
  `const require = __preheatCreateRequire(import.meta.url);`
].join("\n")

/**
 * `--no-minify`: readable names in the artifacts, for CPU profiles (`--cpu-prof`) and heap
 * snapshots of the built bundle; never for what ships.
 */
const noMinify = import.meta.main && process.argv.slice(3).includes("--no-minify")

const describe = (messages: ReadonlyArray<Message>): string =>
  messages.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ` : "") + m.text).join("\n  ")

/**
 * esbuild's ASCII output still leaves non-ASCII characters in regular expression literals (cel-js
 * has /µs/) and in legal comments; one such character makes Node decode the whole bundle into a
 * two-byte string, 5.8 MB of heap instead of 2.9 for as long as the process runs. `\uXXXX` means
 * the same character in a regular expression, string or identifier, and is inert in a comment.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is "not ASCII", control characters included on purpose
const asciiOnly = (text: string): string => text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * Bundles `entryPoint` into `outfile` (and `beside.module` not: `loadedBeside`); fails on errors and
 * on warnings (they mean a broken artifact). Returns esbuild's metafile.
 */
export const bundleTo = async (
  entryPoint: string,
  outfile: string,
  format: "esm" | "cjs",
  minify = !noMinify,
  beside?: Beside
): Promise<Metafile> => {
  const plugins = format === "esm" ? [clientNodeNarrowed, builtinsThroughRequire] : [clientNodeNarrowed]
  const options: BuildOptions = {
    ...commonOptions(entryPoint, minify),
    format,
    outfile,
    plugins: beside === undefined ? plugins : [loadedBeside(beside.module, beside.file), ...plugins],
    ...(format === "esm" ? { banner: { js: esmBanner } } : {})
  }
  let result: Awaited<ReturnType<typeof build>>
  try {
    result = await build(options)
  } catch (error) {
    const errors = (error as { errors?: ReadonlyArray<Message> }).errors
    throw new BuildError(`esbuild failed (${format}):\n  ${errors ? describe(errors) : String(error)}`)
  }
  if (result.warnings.length > 0) {
    throw new BuildError(`esbuild warned (${format}):\n  ${describe(result.warnings)}`)
  }
  const output = result.outputFiles?.[0]
  if (output === undefined) throw new BuildError(`esbuild produced no output for ${outfile}`)
  // esbuild keeps the entry's hashbang on line 1; add it if the entry ever loses it.
  const text = asciiOnly(output.text.startsWith("#!") ? output.text : `${shebang}\n${output.text}`)
  await mkdir(dirname(outfile), { recursive: true })
  await writeFile(outfile, text, { mode: 0o755 })
  await chmod(outfile, 0o755)
  if (result.metafile === undefined) throw new BuildError(`esbuild gave no metafile for ${outfile}`)
  return result.metafile
}

/** Writes a bundle's metafile to dist/meta/ (for esbuild's analyzer, and the build tests). */
const writeMeta = async (outfile: string, metafile: Metafile): Promise<void> => {
  await mkdir(dirname(metaPathOf(outfile)), { recursive: true })
  await writeFile(metaPathOf(outfile), JSON.stringify(metafile))
}

export const run = (command: string, args: ReadonlyArray<string>, what: string): string => {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.error) throw new BuildError(`${what}: cannot run ${command}: ${result.error.message}`)
  if (result.status !== 0) {
    const output = `${result.stderr}${result.stdout}`.trim()
    throw new BuildError(`${what}: ${command} ${args.join(" ")} exited ${result.status ?? result.signal}${output ? `:\n${output}` : ""}`)
  }
  return result.stdout
}

/**
 * The Node 24 binary to embed; the SEA blob is made by the same binary, since a blob only
 * loads in the Node version (and, with the code cache, the V8 build) that wrote it.
 */
export const node24Binary = (): string => {
  if (process.versions.node.split(".")[0] === "24") return process.execPath
  const candidate = join(root, "node_modules", `node-linux-${process.arch}`, "bin", "node")
  if (process.platform === "linux" && existsSync(candidate)) return candidate
  throw new BuildError(
    `no Node 24 binary: running under Node ${process.versions.node} and ${relative(root, candidate)} does not exist ` +
      `(run through npm so node_modules/.bin/node is Node 24, or npm ci with optional dependencies)`
  )
}

const requireStrip = (): void => {
  const probe = spawnSync("strip", ["--version"], { encoding: "utf8" })
  if (probe.error || probe.status !== 0) {
    throw new BuildError(
      "`strip` not found on PATH: install binutils (apt-get install binutils); " +
        "it drops about 16 MiB of symbols from the Node binary before the SEA blob is injected"
    )
  }
}

interface Postject {
  inject(
    filename: string,
    resourceName: string,
    resourceData: Buffer,
    options: { sentinelFuse: string; overwrite?: boolean }
  ): Promise<void>
}

/** What one single executable is assembled from: the target's Node 24 binary and how to strip it. */
export interface SeaTarget {
  /** The Node binary the executable is a copy of (same version as the one writing the blob). */
  readonly node: string
  /** A `strip` for the target's architecture, or undefined to leave the binary unstripped. */
  readonly strip: string | undefined
  readonly out: string
}

/**
 * Writes the SEA blob (dist/sea-main.cjs, with dist/preheat.cjs, dist/preheat-daemon.cjs and
 * dist/preheat-harness.cjs as assets) with this machine's Node 24 and injects it into a copy of
 * `target.node`. The blob carries no code cache and no snapshot, so it is portable across
 * architectures: that is how the arm64 image's executable is assembled on amd64. (V8's code cache
 * would only cover the small main script, not the bundles it runs.)
 */
export const assembleExecutable = async (target: SeaTarget): Promise<void> => {
  const work = await mkdtemp(join(tmpdir(), "preheat-sea-"))
  try {
    const blob = join(work, "preheat.blob")
    const config = join(work, "sea-config.json")
    // The bundles without their hashbang line: seaMain.ts runs each as a function body.
    const assets: Record<string, string> = {}
    for (const [name, path] of [
      ["preheat.cjs", cjsPath],
      ["daemon.cjs", daemonCjsPath],
      ["harness.cjs", harnessCjsPath]
    ] as const) {
      assets[name] = join(work, name)
      await writeFile(assets[name], (await readFile(path, "utf8")).replace(/^#!.*/, ""))
    }
    await writeFile(
      config,
      JSON.stringify({
        main: seaMainPath,
        output: blob,
        disableExperimentalSEAWarning: true,
        useCodeCache: false,
        useSnapshot: false,
        assets
      })
    )
    run(node24Binary(), ["--experimental-sea-config", config], "SEA blob")

    const binary = join(work, "preheat")
    await copyFile(target.node, binary)
    await chmod(binary, 0o755)
    if (target.strip !== undefined) run(target.strip, [binary], "strip")

    const { inject } = createRequire(import.meta.url)("postject") as Postject
    // postject's LIEF prints "warning: Can't find string offset for section name '.note…'" for
    // every ELF Node binary; harmless (nodejs/postject#83), so only that line is filtered out.
    const warn = console.warn
    console.warn = (...args: Array<unknown>) => {
      if (!/^warning: Can't find string offset for section name '\.note/.test(String(args[0]))) warn(...args)
    }
    try {
      await inject(binary, seaResource, await readFile(blob), { sentinelFuse: seaFuse })
    } catch (error) {
      throw new BuildError(`postject: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      console.warn = warn
    }
    await rm(target.out, { force: true })
    await mkdir(dirname(target.out), { recursive: true })
    try {
      await rename(binary, target.out)
    } catch {
      await copyFile(binary, target.out) // tmpdir on another file system
    }
    await chmod(target.out, 0o755)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

const buildExecutable = (): Promise<void> => assembleExecutable({ node: node24Binary(), strip: "strip", out: exePath })

/** Runs `version` on the artifact so a broken build fails here rather than in users' hands. */
export const smoke = (command: string, args: ReadonlyArray<string>): void => {
  const out = run(command, [...args, "version"], `smoke test of ${relative(root, args[0] ?? command)}`)
  if (!out.startsWith("preheat ")) {
    throw new BuildError(`smoke test: \`${[command, ...args].join(" ")} version\` printed ${JSON.stringify(out)}`)
  }
}

/** Runs `daemon --help` on an artifact that must hold the daemon's command. */
export const smokeDaemon = (command: string, args: ReadonlyArray<string>): void => {
  const out = run(command, [...args, "daemon", "--help"], `smoke test of ${relative(root, args[0] ?? command)} daemon`)
  if (!out.includes("--runtime-socket")) {
    throw new BuildError(`smoke test: \`${[command, ...args].join(" ")} daemon --help\` printed ${JSON.stringify(out.slice(0, 400))}`)
  }
}

/**
 * Runs `--log-level info apiserver --help` on an artifact that must run the harness's commands: a
 * flag first, so the product's bundle hands over by the rule of src/cli/treeFor.ts.
 */
export const smokeHarness = (command: string, args: ReadonlyArray<string>): void => {
  const out = run(
    command,
    [...args, "--log-level", "info", "apiserver", "--help"],
    `smoke test of ${relative(root, args[0] ?? command)} apiserver`
  )
  if (!out.includes("--kubeconfig-out")) {
    throw new BuildError(`smoke test: \`${[command, ...args].join(" ")} apiserver --help\` printed ${JSON.stringify(out.slice(0, 400))}`)
  }
}

const summary = async (path: string, what: string): Promise<void> => {
  const { size } = await stat(path)
  console.log(`${relative(root, path).padEnd(25)} ${(size / 1024 / 1024).toFixed(2).padStart(7)} MiB  ${what}`)
}

/** Bundles a role's entry (the product, the daemon), refusing any harness module in it. */
const roleBundle = async (entryPoint: string, outfile: string, format: "esm" | "cjs", beside?: Beside): Promise<void> => {
  const metafile = await bundleTo(entryPoint, outfile, format, !noMinify, beside)
  try {
    refuseHarness(metafile, outfile)
  } catch (error) {
    await rm(outfile, { force: true }) // not left where it could be shipped
    throw error
  }
  await writeMeta(outfile, metafile)
}

const harnessBundle = async (outfile: string, format: "esm" | "cjs"): Promise<void> =>
  writeMeta(outfile, await bundleTo(harnessEntry, outfile, format))

const modes = {
  bundle: async () => {
    await roleBundle(entry, bundlePath, "esm", { module: harnessEntry, file: basename(harnessBundlePath) })
    await harnessBundle(harnessBundlePath, "esm")
    smoke(node24Binary(), [bundlePath])
    smokeHarness(node24Binary(), [bundlePath])
    await summary(bundlePath, "ESM bundle of the product (node >= 22.19, deno run -A)")
    await summary(harnessBundlePath, "ESM bundle of every command (loaded by the product's for the harness's)")
  },
  bin: async () => {
    requireStrip()
    node24Binary()
    await roleBundle(entry, cjsPath, "cjs", { module: harnessEntry, file: basename(harnessCjsPath) })
    smoke(node24Binary(), [cjsPath])
    await summary(cjsPath, "CommonJS bundle of the product (SEA asset)")
    await roleBundle(daemonEntry, daemonCjsPath, "cjs")
    smokeDaemon(node24Binary(), [daemonCjsPath])
    await summary(daemonCjsPath, "CommonJS bundle of the daemon (SEA asset)")
    await harnessBundle(harnessCjsPath, "cjs")
    smokeHarness(node24Binary(), [harnessCjsPath])
    smokeHarness(node24Binary(), [cjsPath])
    await summary(harnessCjsPath, "CommonJS bundle of every command (SEA asset)")
    await bundleTo(seaMainEntry, seaMainPath, "cjs")
    await buildExecutable()
    smoke(exePath, [])
    smokeDaemon(exePath, [])
    smokeHarness(exePath, [])
    await summary(
      exePath,
      `Node ${process.versions.node.split(".")[0] === "24" ? process.versions.node : "24"} SEA, stripped (linux-${process.arch})`
    )
  }
} as const

const isMode = (mode: string | undefined): mode is keyof typeof modes => mode !== undefined && Object.hasOwn(modes, mode)

if (import.meta.main) {
  const mode = process.argv[2]
  const extra = process.argv.slice(3)
  if (!isMode(mode) || extra.some((a) => a !== "--no-minify")) {
    console.error(
      `build: usage: node build.ts <${Object.keys(modes).join("|")}> [--no-minify] (got ${JSON.stringify(process.argv.slice(2))})`
    )
    process.exit(2)
  }
  const started = performance.now()
  try {
    await modes[mode]()
    console.log(`build ${mode}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  } catch (error) {
    console.error(
      `build ${mode} failed: ${error instanceof BuildError ? error.message : error instanceof Error ? error.stack : String(error)}`
    )
    process.exit(1)
  }
}
