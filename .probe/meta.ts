import { build } from "esbuild"
import { writeFileSync } from "node:fs"
const entry = process.argv[2]!
const r = await build({ entryPoints: [entry], outfile: "/tmp/hb/meta-out.mjs", bundle: true, platform: "node", format: "esm", target: "node22", minify: true, logLevel: "error", metafile: true, write: true,
  banner: { js: `import { createRequire as __benchRequire } from "node:module"; const require = __benchRequire(import.meta.url);` } })
const out = Object.values(r.metafile.outputs)[0]!
const byPkg = new Map<string, number>()
for (const [file, { bytesInOutput }] of Object.entries(out.inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file); const k = m ? m[1]! : file.split("/").slice(0, 2).join("/")
  byPkg.set(k, (byPkg.get(k) ?? 0) + bytesInOutput)
}
console.log("total", out.bytes)
for (const [k, v] of [...byPkg].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1024).toFixed(0).padStart(6), "KiB", k)
writeFileSync("/tmp/hb/meta.json", JSON.stringify(r.metafile))
