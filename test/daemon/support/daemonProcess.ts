import { type ChildProcess, fork } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { ChildOptions } from "./daemonChild.ts"
import { serveKubeApi } from "./ipcKubeApi.ts"

/** A daemon child process and what it reported. */
export interface DaemonProcess {
  readonly child: ChildProcess
  readonly pid: number
  /** The ops port, once ready. */
  readonly port: number
  /** Every image it asked the runtime to pull, in order. */
  readonly pulls: Array<string>
  /** Lines it wrote to stderr (its JSON logs). */
  readonly logs: Array<string>
  /** Resident set size now, from /proc. */
  readonly rssBytes: () => number
  /** SIGKILL, as an OOM kill or a node losing the pod would: no cleanup at all. */
  readonly kill: () => Promise<void>
  /** SIGTERM and wait. */
  readonly stop: () => Promise<void>
}

const childPath = join(import.meta.dirname, "daemonChild.ts")

export const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}

/** The child's sources, run with type stripping; a benchmark may pass a bundle of them instead. */
export const daemonChildSource = childPath

/**
 * Starts a daemon process serving `api` to it, and resolves once its NodeImage watch has synced.
 * Runs on the Node that runs this (Node 24 under npm scripts): the TypeScript sources with type
 * stripping, or `entry`, a JavaScript bundle of them.
 */
export const startDaemonProcess = (
  api: KubeApi["Service"],
  options: ChildOptions,
  settings: {
    readonly entry?: string
    readonly execArgv?: ReadonlyArray<string>
    /** Added to this process's environment (a benchmark passes the DaemonSet's). */
    readonly env?: Readonly<Record<string, string>>
    readonly startTimeoutMillis?: number
  } = {}
): Promise<DaemonProcess> =>
  new Promise((resolve, reject) => {
    const startTimeoutMillis = settings.startTimeoutMillis ?? 30_000
    const entry = settings.entry ?? childPath
    const child = fork(entry, [JSON.stringify(options)], {
      execArgv: [...(entry.endsWith(".ts") ? ["--experimental-strip-types", "--no-warnings"] : []), ...(settings.execArgv ?? [])],
      stdio: ["ignore", "inherit", "pipe", "ipc"],
      ...(settings.env === undefined ? {} : { env: { ...process.env, ...settings.env } })
    })
    const pulls: Array<string> = []
    const logs: Array<string> = []
    let buffered = ""
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      logs.push(...lines.filter((line) => line !== ""))
    })
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`daemon process not ready after ${startTimeoutMillis} ms; stderr:\n${logs.join("\n")}`))
    }, startTimeoutMillis)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`daemon process exited (${code ?? signal}) before it was ready; stderr:\n${logs.join("\n")}${buffered}`))
    })
    serveKubeApi(child, api, (note) => {
      if (note["type"] === "pull") pulls.push(String(note["image"]))
      if (note["type"] === "ready") {
        clearTimeout(timer)
        const pid = child.pid ?? 0
        resolve({
          child,
          pid,
          port: Number(note["port"]),
          pulls,
          logs,
          rssBytes: () => rssOf(pid),
          kill: () => {
            child.kill("SIGKILL")
            return exited
          },
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    })
  })
