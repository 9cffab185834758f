// Starts the bench's daemon child (bundled) against an in-memory API, waits, prints /proc figures.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { build } from "esbuild"
import { InMemoryKubeApi } from "../layers/inMemoryKubeApi.ts"
import { KubeApi } from "../src/kube/KubeApi.ts"
import { resources } from "../src/kube/resources.ts"
import { daemonChildSource, startDaemonProcess } from "../test/daemon/support/daemonProcess.ts"
import { readEnvFile } from "../test/e2e/e2eEnv.ts"

const execArgv = (process.env.CHILD_ARGV ?? "").split(" ").filter((s) => s !== "")
const env = readEnvFile()
const runtime = ManagedRuntime.make(InMemoryKubeApi.layer)
const api = await runtime.runPromise(Effect.service(KubeApi))
const dir = mkdtempSync(join(tmpdir(), "probe-"))
const outfile = process.env.ENTRY ?? join(dir, "child.mjs")
if (process.env.SHIPPED) await (await import("../build.ts")).bundleTo(daemonChildSource, outfile, "esm")
else if (!process.env.ENTRY) await build({ entryPoints: [daemonChildSource], outfile, bundle: true, platform: "node", format: "esm", target: "node22", minify: true, logLevel: "error",
  banner: { js: `import { createRequire as __benchRequire } from "node:module"; const require = __benchRequire(import.meta.url);` } })
await runtime.runPromise(api.create(resources.nodeImage, { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: "n1" }, spec: {} }))
const d = await startDaemonProcess(api, { daemon: { nodeName: "n1", maxConcurrentPulls: 10 }, socket: env.socket }, { entry: outfile, execArgv })
await new Promise((r) => setTimeout(r, 3000))
const s: number[] = []
for (let i = 0; i < 10; i++) { s.push(d.rssBytes()); await new Promise((r) => setTimeout(r, 100)) }
s.sort((a, b) => a - b)
const rollup = readFileSync(`/proc/${d.pid}/smaps_rollup`, "utf8")
const pick = (k: string) => (Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(rollup)?.[1]) / 1024).toFixed(1)
console.log(`idle_rss ${(s[5]! / 1048576).toFixed(1)} MiB  Anonymous ${pick("Anonymous")} Rss ${pick("Rss")} Pss ${pick("Pss")} Pss_File ${pick("Pss_File")} Pss_Anon ${pick("Pss_Anon")}  argv=${execArgv.join(" ")}`)
if (process.env.SMAPS) (await import("node:fs")).writeFileSync(process.env.SMAPS, readFileSync(`/proc/${d.pid}/smaps`, "utf8") + "\nTASKS " + (await import("node:fs")).readdirSync(`/proc/${d.pid}/task`).length)
if (process.env.HOOK) (await import("node:child_process")).execSync(`${process.env.HOOK} ${d.pid}`, { stdio: "inherit" })
if (process.env.KEEP) await new Promise((r) => setTimeout(r, Number(process.env.KEEP)))
await d.stop()
await runtime.dispose()
rmSync(dir, { recursive: true, force: true })
