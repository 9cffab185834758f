/**
 * npm run bench:client -- [--requests K] [--concurrency C] [--rounds R] [--only-live] [--cpu-prof]
 *
 * What one API request costs, against what it must cost. bench/clientLoad.ts, bundled as the
 * shipped bundles are, patches one NodeImage K times through the live KubeApi (its transport and
 * credentials, rate limiter, retry policy, metrics) and K times through plain
 * node:http with a keep-alive agent (the same body, the same answer parsed), alternately, against
 * `preheat apiserver` (dist/preheat.mjs) in another process; then K times through plain node:http
 * against bench/plainServer.ts (a third process: the body parsed, merged and the result sent, no
 * more). Prints per round, in CPU microseconds: `plain_us_per_request=.. live_us_per_request=..
 * ratio=..` (the client's), `apiserver_us_per_patch=.. plain_server_us_per_patch=.. server_ratio=..`
 * (the server's, for the plain client's patches) and `parse_us_per_nodeimage=..` (JSON.parse of
 * the answer); only the live figure with --only-live, for a profile of the live client alone.
 * --cpu-prof profiles the load and the API server (`npm run build -- --no-minify` first for names).
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
const plainServer = join(dir, "plainServer.mjs")
// Readable names when profiled.
await bundleTo(resolve(import.meta.dirname, "clientLoad.ts"), load, "esm", !values["cpu-prof"])
await bundleTo(resolve(import.meta.dirname, "plainServer.ts"), plainServer, "esm", true)

// Profiles of the load and of the API server (build the bundle with --no-minify for readable names).
const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []
const server = spawn(process.execPath, [...profile, bundle, "apiserver", "--port", "0", "--kubeconfig-out", kubeconfig], {
  stdio: ["ignore", "pipe", "pipe"]
})
const plain = spawn(process.execPath, [plainServer], { stdio: ["ignore", "pipe", "pipe"] })
let code: number | null = 1
try {
  const address = await waitForLine(server, "preheat apiserver", (line) => /listening on (http\S+)/.exec(line)?.[1])
  const plainAddress = await waitForLine(plain, "the plain server", (line) => /listening on (http\S+)/.exec(line)?.[1])
  const child = spawn(
    process.execPath,
    [
      ...profile,
      load,
      `--server=${address}`,
      `--server-pid=${server.pid}`,
      `--plain-server=${plainAddress}`,
      `--plain-server-pid=${plain.pid}`,
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
  plain.kill()
  if (values["cpu-prof"]) console.log(`profile in ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.exit(code ?? 1)
