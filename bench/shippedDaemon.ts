/**
 * The daemon as shipped, for bench:daemon: the executable build.ts makes (dist/preheat, the image's
 * entrypoint) run as `preheat daemon` with deploy/daemon.yaml's args and environment, its live
 * client talking HTTP to `preheat apiserver` (a process of its own) and its CRI client to the real
 * containerd. Only what a laptop lacks is replaced: --runtime-socket instead of --host-run-dir,
 * --kubeconfig instead of the service account, NODE_NAME, and an ops port the kernel picks.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { copyFileSync } from "node:fs"
import { join } from "node:path"
import { statusBytes } from "./procStat.ts"
import { type Container, plainEnv, shippedContainer } from "./shippedManifests.ts"
import { waitForLine } from "./waitForLine.ts"

/** The daemon container of the DaemonSet in deploy/daemon.yaml. */
export const daemonContainer = (): Container => shippedContainer("daemon.yaml", "DaemonSet", "daemon")

/** The container's plain `value` variables (fieldRef ones, such as NODE_NAME, are the caller's). */
export const daemonSetEnv = (): Record<string, string> => plainEnv(daemonContainer())

/** The manifest's args with the host-specific ones replaced. */
export const shippedDaemonArgs = (replace: { readonly socket: string; readonly kubeconfig: string }): Array<string> => {
  const replaced = new Set(["--host-run-dir", "--metrics-port", "--metrics-host", "--runtime-socket", "--kubeconfig"])
  const kept = (daemonContainer().args ?? []).filter((arg) => !replaced.has(arg.split("=")[0]!))
  return [
    ...kept,
    `--runtime-socket=${replace.socket}`,
    `--kubeconfig=${replace.kubeconfig}`,
    "--metrics-host=127.0.0.1",
    "--metrics-port=0"
  ]
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const stop = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGTERM")
  await Promise.race([exited, sleep(10_000)])
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

export interface ShippedIdle {
  readonly idleRssMiB: number
  readonly command: string
}

/**
 * Starts the API server and the shipped daemon, waits until the daemon is ready (its watch synced,
 * the runtime answering), lets start-up garbage settle for `settleMillis`, and returns the median of
 * 10 VmRSS samples 100 ms apart. The executable is copied first: the page cache of a file just
 * written by build.ts's strip and postject maps it in large folios (about 20 MiB more RSS, docs).
 */
export const measureShippedIdle = async (options: {
  readonly executable: string
  readonly dir: string
  readonly socket: string
  readonly nodeName: string
  readonly settleMillis?: number
}): Promise<ShippedIdle> => {
  const executable = join(options.dir, "preheat")
  copyFileSync(options.executable, executable)
  const kubeconfig = join(options.dir, "kubeconfig")
  const children: Array<ChildProcess> = []
  try {
    const apiserver = spawn(executable, ["apiserver", "--kubeconfig-out", kubeconfig], { stdio: ["ignore", "pipe", "pipe"] })
    children.push(apiserver)
    const server = await waitForLine(apiserver, "preheat apiserver", (line) => /listening on (http\S+)/.exec(line)?.[1])
    const created = await fetch(`${server}/apis/apps.kruise.io/v1alpha1/nodeimages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: options.nodeName }, spec: {} })
    })
    if (created.status !== 201) throw new Error(`creating NodeImage ${options.nodeName}: HTTP ${created.status} ${await created.text()}`)

    const args = shippedDaemonArgs({ socket: options.socket, kubeconfig })
    // Only the manifest's NODE_OPTIONS and malloc settings, not whatever this shell has.
    const { NODE_OPTIONS: _, ...inherited } = process.env
    const env = { ...inherited, ...daemonSetEnv(), NODE_NAME: options.nodeName }
    const daemon = spawn(executable, args, { stdio: ["ignore", "pipe", "pipe"], env })
    children.push(daemon)
    const opsPort = await waitForLine(daemon, "preheat daemon", (line) => {
      if (!line.includes("daemon started")) return undefined
      return (JSON.parse(line) as { opsPort?: number }).opsPort
    })
    for (let ready = false; !ready; await sleep(100)) {
      ready = (await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined))?.status === 200
    }
    await sleep(options.settleMillis ?? 5000)
    const samples: Array<number> = []
    for (let i = 0; i < 10; i++) {
      samples.push(statusBytes(daemon.pid!, "VmRSS"))
      await sleep(100)
    }
    const shown = Object.entries(daemonSetEnv())
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(" ")
    return { idleRssMiB: median(samples) / 1024 / 1024, command: `${shown} NODE_NAME=${options.nodeName} preheat ${args.join(" ")}` }
  } finally {
    for (const child of children.reverse()) await stop(child)
  }
}
