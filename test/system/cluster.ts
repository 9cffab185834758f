/**
 * A cluster of real processes for the whole-system tests: the built bundle (dist/preheat.mjs)
 * run as `apiserver`, `controller` and `simulated-daemon` (`daemon` on a real runtime), each with
 * its output in a log file under one temp dir, and kubectl pointed at the API server as a user would.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parse } from "yaml"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"

const bundle = resolve(import.meta.dirname, "../../dist/preheat.mjs")
const deno = resolve(import.meta.dirname, "../../node_modules/.bin/deno")
const executable = resolve(import.meta.dirname, "../../dist/preheat")

/**
 * Which runtime runs a process of the bundle: Node 24, or Deno (a first-class runtime, issue 6);
 * or the single executable (`npm run build:bin`), which carries Node and the bundles.
 */
export type Runtime = "node" | "deno" | "executable"
const kubectlBinary = process.env["KUBECTL"] ?? "/usr/bin/kubectl"

export interface Process {
  readonly name: string
  readonly child: ChildProcess
  readonly logFile: string
  readonly exited: Promise<number | null>
}

export interface KubectlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

/** Sum of a Prometheus metric's samples (all label sets), from a /metrics body. */
export const metricSum = (body: string, name: string): number =>
  body
    .split("\n")
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)

export const scrape = async (port: number): Promise<string> => {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`)
  return response.text()
}

export class Cluster {
  readonly processes: Array<Process> = []
  kubeconfig = ""

  readonly dir: string

  private constructor(dir: string) {
    this.dir = dir
  }

  /** Starts the API server (with `apiserverArgs`) on a free port and waits for its address on stdout. */
  static async start(apiserverArgs: ReadonlyArray<string> = []): Promise<Cluster> {
    const cluster = new Cluster(mkdtempSync(join(tmpdir(), "preheat-system-")))
    cluster.kubeconfig = join(cluster.dir, "kubeconfig")
    const apiserver = cluster.spawn("apiserver", ["apiserver", "--port", "0", "--kubeconfig-out", cluster.kubeconfig, ...apiserverArgs])
    await eventually(
      "the API server's address on its stdout",
      async () => {
        if (apiserver.child.exitCode !== null) {
          throw new Error(`apiserver exited with ${apiserver.child.exitCode}:\n${readFileSync(apiserver.logFile, "utf8")}`)
        }
        return /listening on (http:\/\/\S+)/.exec(readFileSync(apiserver.logFile, "utf8"))?.[1]
      },
      20_000,
      100
    )
    return cluster
  }

  /**
   * A cluster with the namespaces preheat expects (the Lease's and the secret copies'), then
   * `setup`. A failure here is no test's: every process's log is printed and the processes are
   * stopped before it is rethrown.
   */
  static async startWith(setup: (cluster: Cluster) => Promise<void>, apiserverArgs: ReadonlyArray<string> = []): Promise<Cluster> {
    const cluster = await Cluster.start(apiserverArgs)
    try {
      await cluster.ok(["create", "namespace", "preheat-system"])
      await cluster.ok(["create", "namespace", "preheat-daemon-config"])
      await setup(cluster)
      return cluster
    } catch (error) {
      console.error(cluster.dumpLogs())
      await cluster.stop()
      throw error
    }
  }

  /** Runs `preheat ARGS` from the bundle under this Node (24, from the npm scripts' PATH), or as `runtime` says. */
  spawn(name: string, args: ReadonlyArray<string>, env: Record<string, string> = {}, runtime: Runtime = "node"): Process {
    const logFile = join(this.dir, `${name}.log`)
    const log = createWriteStream(logFile, { flags: "a" })
    const [file, prefix] =
      runtime === "deno" ? [deno, ["run", "-A", bundle]] : runtime === "executable" ? [executable, []] : [process.execPath, [bundle]]
    const child = spawn(file, [...prefix, ...args], {
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout?.pipe(log, { end: false })
    child.stderr?.pipe(log, { end: false })
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
    const started: Process = { name, child, logFile, exited }
    this.processes.push(started)
    return started
  }

  /** Controllers run on Deno: the system tests are where the bundle proves itself there. */
  async startController(name: string, metricsPort: number, args: ReadonlyArray<string> = []): Promise<Process> {
    const controller = this.spawn(
      name,
      [
        "controller",
        "--kubeconfig",
        this.kubeconfig,
        "--metrics-port",
        String(metricsPort),
        "--metrics-host",
        "127.0.0.1",
        "--node-ready-delay-seconds",
        "1",
        "--leader-election-namespace",
        "preheat-system",
        ...args
      ],
      { POD_NAME: name },
      "deno"
    )
    await this.waitHealthy(controller, metricsPort)
    return controller
  }

  /** A daemon on the simulated runtime, or on a real one when a CRI socket is given. */
  /** `flags`: more of the daemon's flags, after those every daemon here gets. */
  async startDaemon(node: string, metricsPort: number, runtimeSocket?: string, flags: ReadonlyArray<string> = []): Promise<Process> {
    const daemon = this.spawn(`daemon-${node}`, [
      ...(runtimeSocket === undefined ? ["simulated-daemon"] : ["daemon", "--runtime-socket", runtimeSocket]),
      "--node-name",
      node,
      "--kubeconfig",
      this.kubeconfig,
      "--metrics-port",
      String(metricsPort),
      "--metrics-host",
      "127.0.0.1",
      ...flags
    ])
    await this.waitHealthy(daemon, metricsPort)
    return daemon
  }

  /** Until /healthz answers 200 (or the process dies, which fails at once with its log). */
  async waitHealthy(process: Process, port: number): Promise<void> {
    await eventually(
      `${process.name} healthy on :${port}`,
      async () => {
        if (process.child.exitCode !== null) throw new Error(`${process.name} exited with ${process.child.exitCode}`)
        const response = await fetch(`http://127.0.0.1:${port}/healthz`)
        return response.ok ? true : undefined
      },
      30_000,
      200
    )
  }

  /** kubectl as a user runs it; its discovery cache is fresh for this cluster. */
  kubectl(args: ReadonlyArray<string>, input?: string): Promise<KubectlResult> {
    const full = ["--kubeconfig", this.kubeconfig, "--cache-dir", join(this.dir, "kube-cache"), ...args]
    return new Promise((done) => {
      const child = execFile(
        kubectlBinary,
        full,
        { timeout: 120_000, env: { ...process.env, HOME: this.dir } },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
          done({ code, stdout, stderr })
        }
      )
      if (input !== undefined) child.stdin?.end(input)
    })
  }

  /** kubectl that must succeed: returns stdout, throws with stderr otherwise. */
  async ok(args: ReadonlyArray<string>, input?: string): Promise<string> {
    const result = await this.kubectl(args, input)
    if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
    return result.stdout
  }

  /** `kubectl apply -f FILE` from a file in the temp dir, exactly as a user applies YAML. */
  async applyFile(name: string, manifest: string): Promise<KubectlResult> {
    const file = join(this.dir, `${name}.yaml`)
    writeFileSync(file, manifest)
    return this.kubectl(["apply", "-f", file])
  }

  async getYaml(args: ReadonlyArray<string>): Promise<any> {
    return parse(await this.ok(["get", ...args, "-o", "yaml"]))
  }

  async createNodes(names: ReadonlyArray<string>, labels: Record<string, string>): Promise<void> {
    for (const name of names) {
      const applied = await this.applyFile(`node-${name}`, nodeManifest(name, labels))
      if (applied.code !== 0) throw new Error(applied.stderr)
      await this.ok([
        "patch",
        "node",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}'
      ])
    }
  }

  /**
   * Ready Nodes with these labels, the controller (with `controllerArgs`) and a daemon on each
   * node, once every node has its NodeImage.
   */
  async startNodes(
    names: ReadonlyArray<string>,
    labels: Record<string, string>,
    controllerArgs: ReadonlyArray<string> = []
  ): Promise<void> {
    await this.createNodes(names, labels)
    await this.startController("controller", await freePort(), controllerArgs)
    for (const node of names) await this.startDaemon(node, await freePort())
    await eventually("a NodeImage per node", async () => {
      const found = (await this.ok(["get", "nodeimages", "-o", "name"])).trim().split("\n")
      return found.length === names.length ? found : undefined
    })
  }

  /** Every log, for a failing test. */
  dumpLogs(): string {
    return readdirSync(this.dir)
      .filter((file) => file.endsWith(".log"))
      .map((file) => `===== ${file} =====\n${readFileSync(join(this.dir, file), "utf8").split("\n").slice(-200).join("\n")}`)
      .join("\n")
  }

  kill(process: Process, signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill(signal)
    return process.exited
  }

  /** Kills every child; for afterAll, also after a failure. */
  async stop(): Promise<void> {
    await Promise.all(this.processes.map((p) => this.kill(p)))
  }
}

const nodeManifest = (name: string, labels: Record<string, string>) =>
  `${[
    "apiVersion: v1",
    "kind: Node",
    "metadata:",
    `  name: ${name}`,
    "  labels:",
    `    kubernetes.io/hostname: ${name}`,
    ...Object.entries(labels).map(([key, value]) => `    ${key}: ${value}`)
  ].join("\n")}\n`

/** The tags of `image` in a NodeImage's status, as {tag: phase}. */
export const tagPhases = (nodeImage: any, image: string): Record<string, string> =>
  Object.fromEntries(
    ((nodeImage?.status?.imageStatuses?.[image]?.tags ?? []) as Array<{ tag: string; phase: string }>).map((t) => [t.tag, t.phase])
  )

/** The tags of `image` in a NodeImage's spec. */
export const specTags = (nodeImage: any, image: string): Array<string> =>
  ((nodeImage?.spec?.images?.[image]?.tags ?? []) as Array<{ tag: string }>).map((t) => t.tag)
