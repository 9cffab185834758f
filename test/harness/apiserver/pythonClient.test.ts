// The official Kubernetes Python client (Debian's python3-kubernetes) lists and watches against
// the embedded API server: it sends `watch=True`, which kube-apiserver reads as true. Without the
// package the test is skipped, except under PREHEAT_REQUIRE_E2E=1 (CI), where that is a failure.
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kubeconfigFor } from "../../../harness/apiserver/http/kubeconfig.ts"
import { namespace, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

const script = join(import.meta.dirname, "python", "list_watch.py")
// Debian's interpreter, where python3-kubernetes installs (a python3 earlier on PATH may not see it).
const python = "/usr/bin/python3"

const pythonClient = (() => {
  try {
    execFileSync(python, ["-c", "import kubernetes"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
const required = process.env["PREHEAT_REQUIRE_E2E"] === "1" || process.env["CI"] !== undefined

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(python, [script, ...args], { timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

describe.skipIf(!pythonClient && !required)("the official Python client", () => {
  let server: RunningServer
  beforeAll(async () => {
    if (!pythonClient)
      throw new Error("python3-kubernetes is required (PREHEAT_REQUIRE_E2E=1 or CI): apt-get install -y python3-kubernetes")
    server = await startServer()
  })
  afterAll(() => server?.close())

  it("lists, then watch.stream() gets events, with and without a resourceVersion", async () => {
    const ns = await namespace(server)
    const directory = mkdtempSync(join(tmpdir(), "preheat-python-"))
    const kubeconfig = join(directory, "kubeconfig")
    writeFileSync(kubeconfig, kubeconfigFor({ url: server.url }))
    const result = await run([kubeconfig, ns])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({
      listed: ["first"],
      withoutResourceVersion: [{ type: "ADDED", name: "first" }],
      fromResourceVersion: [{ type: "ADDED", name: "second" }]
    })
  })
})
