/**
 * npm run bench:client -- [--requests K] [--concurrency C] [--rounds R] [--only-live] [--cpu-prof]
 *
 * What one API request costs the client in its own CPU: bench/clientLoad.ts, bundled as the
 * shipped bundles are, patches one NodeImage K times through the live KubeApi (client-node's
 * fetch and authentication, rate limiter, retry policy, metrics) and K times through plain
 * node:http with a keep-alive agent (the same body, the same answer parsed), alternately, against
 * `preheat apiserver` (dist/preheat.mjs) in another process. Prints per round:
 * `plain_us_per_request=.. live_us_per_request=.. ratio=..` (only the live figure with
 * --only-live, for a profile of the live client alone).
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { bundleTo } from "../build.ts"
import { waitForLine } from "./waitForLine.ts"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "4000" },
    concurrency: { type: "string", default: "10" },
    rounds: { type: "string", default: "6" },
    "only-live": { type: "boolean", default: false },
    "cpu-prof": { type: "boolean", default: false }
  }
})
const bundle = resolve(import.meta.dirname, "../dist/preheat.mjs")
if (!existsSync(bundle)) throw new Error(`${bundle} is missing: npm run build`)
const dir = mkdtempSync(join(tmpdir(), "preheat-bench-client-"))
const kubeconfig = join(dir, "kubeconfig")
const load = join(dir, "load.mjs")
// Readable names when profiled.
await bundleTo(resolve(import.meta.dirname, "clientLoad.ts"), load, "esm", !values["cpu-prof"])

const server = spawn(process.execPath, [bundle, "apiserver", "--port", "0", "--kubeconfig-out", kubeconfig], {
  stdio: ["ignore", "pipe", "pipe"]
})
let code: number | null = 1
try {
  const address = await waitForLine(server, "preheat apiserver", (line) => /listening on (http\S+)/.exec(line)?.[1])
  const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []
  const child = spawn(
    process.execPath,
    [
      ...profile,
      load,
      `--server=${address}`,
      `--kubeconfig=${kubeconfig}`,
      `--requests=${values.requests}`,
      `--concurrency=${values.concurrency}`,
      `--rounds=${values.rounds}`,
      ...(values["only-live"] ? ["--only-live"] : [])
    ],
    { stdio: "inherit" }
  )
  code = await new Promise<number | null>((done) => child.once("exit", done))
} finally {
  server.kill()
  if (values["cpu-prof"]) console.log(`profile in ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.exit(code ?? 1)
