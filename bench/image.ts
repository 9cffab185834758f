/**
 * The image's size and start-up, against the layout a distroless Node image has (a plain Node
 * binary plus the ESM bundle on the same minimal root file system), both built here by
 * build/oci.ts since no base image can be pulled on these machines.
 *
 *   npm run build && npm run build:bin && npm run bench:image      (as root: start-up uses chroot)
 *
 * Size: the gzip layer (what a pull downloads) and the unpacked tar. Start-up: `preheat version`
 * and `preheat daemon --help` inside each unpacked root file system as uid 65532 (chroot), RUNS
 * runs per case after one warm-up, round-robin, wall time from spawn to exit. The last line is
 * machine-readable.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { bundlePath, exePath, harnessBundlePath, node24Binary } from "../build.ts"
import { platformImage } from "../build/oci.ts"
import { caBundlePath, readelf, rootfsEntries, type LibraryLayout } from "../build/rootfs.ts"
import { runConfig } from "../build/image.ts"

const RUNS = 15
const layout: LibraryLayout = {
  imageDir: "/lib/x86_64-linux-gnu",
  hostDirs: ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"],
  machine: "Advanced Micro Devices X86-64"
}

const fail = (message: string): never => {
  console.error(`bench:image: ${message}`)
  process.exit(1)
}
if (process.arch !== "x64") fail("measures the linux/amd64 image; run on x64")
if (process.getuid?.() !== 0) fail("needs root (chroot)")
for (const path of [exePath, bundlePath, harnessBundlePath])
  if (!existsSync(path)) fail(`${path} is missing: npm run build && npm run build:bin`)

interface Variant {
  readonly key: string
  readonly name: string
  readonly executable: string
  readonly extra: Parameters<typeof rootfsEntries>[4]
  readonly command: ReadonlyArray<string>
}

const variants: ReadonlyArray<Variant> = [
  { key: "sea", name: "preheat image: SEA (stripped, code cache)", executable: exePath, extra: [], command: ["/usr/local/bin/preheat"] },
  {
    key: "node",
    name: "distroless layout: node binary + dist/preheat*.mjs",
    executable: node24Binary(),
    extra: [
      { kind: "dir", path: "/app", mode: 0o755 },
      { kind: "file", path: "/app/preheat.mjs", mode: 0o644, content: readFileSync(bundlePath) },
      { kind: "file", path: "/app/preheat-harness.mjs", mode: 0o644, content: readFileSync(harnessBundlePath) }
    ],
    command: ["/usr/local/bin/preheat", "/app/preheat.mjs"]
  }
]

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const work = mkdtempSync(join(tmpdir(), "preheat-bench-image-"))
const results: Record<string, Record<string, number>> = {}
try {
  const roots = new Map<string, string>()
  for (const v of variants) {
    const entries = rootfsEntries(v.executable, layout, caBundlePath, readelf, v.extra)
    const image = platformImage({ architecture: "amd64", os: "linux" }, entries, runConfig, {})
    const dir = join(work, v.key)
    spawnSync("mkdir", [dir])
    writeFileSync(join(work, `${v.key}.tar`), gunzipSync(image.layer.bytes))
    const unpacked = spawnSync("tar", ["-xf", join(work, `${v.key}.tar`), "-C", dir])
    if (unpacked.status !== 0) fail(`tar -x ${v.key}: ${unpacked.stderr}`)
    roots.set(v.key, dir)
    results[v.key] = { layerBytes: image.layer.size, unpackedBytes: image.uncompressedSize }
    const sizes = `layer ${mib(image.layer.size).padStart(10)} gzip, ${mib(image.uncompressedSize).padStart(10)} unpacked`
    console.log(`${v.name.padEnd(52)} ${sizes}`)
  }
  for (const args of [["version"], ["daemon", "--help"]]) {
    const times = new Map<string, Array<number>>(variants.map((v) => [v.key, []]))
    const once = (v: Variant) => {
      const started = performance.now()
      const run = spawnSync("chroot", ["--userspec=65532:65532", roots.get(v.key)!, ...v.command, ...args], { encoding: "utf8" })
      const ms = performance.now() - started
      if (run.status !== 0) fail(`${v.key} ${args.join(" ")}: exit ${run.status}: ${run.stderr}`)
      return ms
    }
    for (const v of variants) once(v)
    for (let i = 0; i < RUNS; i++) for (const v of variants) times.get(v.key)!.push(once(v))
    for (const v of variants) {
      const sorted = [...times.get(v.key)!].sort((a, b) => a - b)
      const median = sorted[Math.floor(sorted.length / 2)]!
      results[v.key]![`${args[0]}MedianMs`] = Math.round(median)
      const figures = `median ${median.toFixed(0).padStart(4)} ms, min ${sorted[0]!.toFixed(0).padStart(4)} ms`
      console.log(`${v.name.padEnd(52)} ${args.join(" ").padEnd(14)} ${figures}`)
    }
  }
  console.log(JSON.stringify(results))
} finally {
  rmSync(work, { recursive: true, force: true })
}
