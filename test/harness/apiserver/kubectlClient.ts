// Runs the real kubectl against an embedded API server, as a user would, with a fresh discovery
// cache per test so that no test sees another's (or an earlier server's) cached discovery.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { kubeconfigFor } from "../../../harness/apiserver/http/kubeconfig.ts"

export const kubectlPath = "/usr/bin/kubectl"
export const hasKubectl = existsSync(kubectlPath)

export interface KubectlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export interface Kubectl {
  (args: ReadonlyArray<string>, options?: { readonly stdin?: string; readonly timeoutMs?: number }): Promise<KubectlResult>
  /** A long-running kubectl (get -w): its output so far, and a way to stop it. */
  readonly spawn: (args: ReadonlyArray<string>) => { readonly output: () => string; readonly stop: () => Promise<void> }
  readonly directory: string
}

export const kubectlFor = (server: { readonly url: string }, options: { readonly token?: string } = {}): Kubectl => {
  const directory = mkdtempSync(join(tmpdir(), "preheat-kubectl-"))
  const kubeconfig = join(directory, "kubeconfig")
  writeFileSync(kubeconfig, kubeconfigFor({ url: server.url, ...(options.token === undefined ? {} : { token: options.token }) }))
  const base = ["--kubeconfig", kubeconfig, "--cache-dir", join(directory, "cache")]
  const env = { ...process.env, HOME: directory, KUBECONFIG: kubeconfig }
  const run = (args: ReadonlyArray<string>, runOptions: { readonly stdin?: string; readonly timeoutMs?: number } = {}) =>
    new Promise<KubectlResult>((resolve) => {
      const child = execFile(kubectlPath, [...base, ...args], { env, timeout: runOptions.timeoutMs ?? 15_000 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      })
      if (runOptions.stdin !== undefined) child.stdin?.end(runOptions.stdin)
    })
  const spawn = (args: ReadonlyArray<string>) => {
    let output = ""
    const child = execFile(kubectlPath, [...base, ...args], { env })
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
    return {
      output: () => output,
      stop: async () => {
        child.kill("SIGTERM")
        await exited
      }
    }
  }
  return Object.assign(run, { spawn, directory })
}
