/**
 * npm run bench:client -- [--requests K] [--concurrency C] [--rounds R] [--cpu-prof]
 *
 * What one API request costs the client in its own CPU: bench/clientLoad.ts, bundled as the
 * shipped bundles are, patches one NodeImage K times through the live KubeApi (client-node's
 * fetch and authentication, rate limiter, retry policy, metrics) and K times through plain
 * node:http with a keep-alive agent (the same body, the same answer parsed), alternately, against
 * `preheat apiserver` (dist/preheat.mjs) in another process. Prints per round:
 * `plain_us_per_request=.. live_us_per_request=.. ratio=..`.
 */
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { bundleTo } from "../build.ts"

const { values, tokens } = parseArgs({
  options: {
    requests: { type: "string", default: "4000" },
    concurrency: { type: "string", default: "10" },
    rounds: { type: "string", default: "6" },
    "only-live": { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false }
  },
  tokens: true
})
const dir = mkdtempSync(join(tmpdir(), "preheat-bench-client-"))
const kubeconfig = join(dir, "kubeconfig")
const load = join(dir, "load.mjs")
// Readable names when profiled.
await bundleTo(resolve(import.meta.dirname, "clientLoad.ts"), load, "esm", !values["cpu-prof"])

const server = spawn(
  process.execPath,
  [resolve(import.meta.dirname, "../dist/preheat.mjs"), "apiserver", "--port", "0", "--kubeconfig-out", kubeconfig],
  {
    stdio: ["ignore", "pipe", "inherit"]
  }
)
const address = await new Promise<string>((done) => {
  let text = ""
  server.stdout!.on("data", (chunk) => {
    text += chunk
    const found = /listening on (http:\/\/\S+)/.exec(text)
    if (found) done(found[1]!)
  })
})
const passOn = tokens
  .filter((t) => t.kind === "option" && t.name !== "cpu-prof")
  .map((t) => (t.kind === "option" ? t.rawName + (t.value === undefined ? "" : `=${t.value}`) : ""))
const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []
const child = spawn(process.execPath, [...profile, load, "--server", address, "--kubeconfig", kubeconfig, ...passOn], { stdio: "inherit" })
const code = await new Promise<number | null>((done) => child.once("exit", done))
server.kill()
if (values["cpu-prof"]) console.log(`profile in ${dir}`)
process.exit(code ?? 1)
