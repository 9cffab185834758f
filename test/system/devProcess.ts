// `preheat dev` as the README starts it, for the system tests that drive it with kubectl: the
// built executable (else the bundle on Node, or on Deno when asked), a kubeconfig and a kubectl
// cache of the test's own, and its output kept for when a test fails.
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { expect } from "vitest"
import { eventually } from "../support/eventually.ts"

const root = resolve(import.meta.dirname, "../..")
const executable = join(root, "dist/preheat")

export interface Launcher {
  readonly name: string
  readonly file: string
  readonly args: ReadonlyArray<string>
}

/** The single executable when it was built, else the bundle on Node. */
export const nodeLauncher: Launcher = existsSync(executable)
  ? { name: "the executable", file: executable, args: [] }
  : { name: "the bundle on Node (no executable built)", file: process.execPath, args: [join(root, "dist/preheat.mjs")] }

export const denoLauncher: Launcher = {
  name: "the bundle on Deno",
  file: join(root, "node_modules/.bin/deno"),
  args: ["run", "-A", join(root, "dist/preheat.mjs")]
}

export interface DevProcess {
  readonly dir: string
  readonly kubeconfig: string
  readonly process: ChildProcess
  /** Its stdout and stderr so far. */
  readonly output: () => string
  readonly exited: Promise<number | null>
  /** kubectl 1.32 against it; rejects with kubectl's stderr. */
  readonly kubectl: (command: ReadonlyArray<string>) => Promise<string>
  /** `kubectl apply -f` of the text, written to NAME.yaml in the test's directory. */
  readonly apply: (name: string, text: string) => Promise<string>
}

/** Starts `preheat dev --nodes N` and waits until it says it is ready. */
const startDev = async (
  launcher: Launcher,
  nodes: number,
  prefix: string,
  /** More of `preheat dev`'s flags. */
  flags: ReadonlyArray<string> = []
): Promise<DevProcess> => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const kubeconfig = join(dir, "kubeconfig")
  const kubectl = (command: ReadonlyArray<string>) =>
    new Promise<string>((done, fail) => {
      execFile(
        "/usr/bin/kubectl",
        ["--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"), ...command],
        { env: { ...process.env, HOME: dir }, timeout: 120_000 },
        (error, stdout, stderr) => (error === null ? done(stdout) : fail(new Error(`kubectl ${command.join(" ")}: ${stderr}`)))
      )
    })
  const apply = (name: string, text: string) => {
    writeFileSync(join(dir, `${name}.yaml`), text)
    return kubectl(["apply", "-f", join(dir, `${name}.yaml`)])
  }
  const child = spawn(launcher.file, [...launcher.args, "dev", "--nodes", String(nodes), "--kubeconfig", kubeconfig, ...flags], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" }
  })
  let output = ""
  child.stdout?.on("data", (chunk) => (output += String(chunk)))
  child.stderr?.on("data", (chunk) => (output += String(chunk)))
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
  try {
    await eventually("preheat dev to be ready", async () => (output.includes("Ctrl-C stops everything") ? true : undefined), 30_000)
  } catch (error) {
    child.kill("SIGKILL")
    console.error(output)
    throw error
  }
  return { dir, kubeconfig, process: child, output: () => output, exited, kubectl, apply }
}

/** Ctrl-C, and whether it stopped within 15 s (the code it exited with, else "still running"). */
const interrupt = (dev: DevProcess): Promise<number | null | "still running"> => {
  dev.process.kill("SIGINT")
  return Promise.race([dev.exited, new Promise<"still running">((done) => setTimeout(() => done("still running"), 15_000))])
}

/** Which `preheat dev` a test runs: on `launcher` (default: the executable), `nodes` simulated nodes, more flags. */
export interface DevOptions {
  readonly launcher?: Launcher
  readonly nodes: number
  /** Of the test's temp dir (its kubeconfig, kubectl cache and YAML files). */
  readonly prefix: string
  readonly flags?: ReadonlyArray<string>
}

/**
 * `body` against a `preheat dev` of its own, which Ctrl-C must then stop within 15 s. When anything
 * fails, dev's output is printed; whatever happens, the process is killed in the end.
 */
export const withDev = async <A>(options: DevOptions, body: (dev: DevProcess) => Promise<A>): Promise<A> => {
  const dev = await startDev(options.launcher ?? nodeLauncher, options.nodes, options.prefix, options.flags)
  try {
    const result = await body(dev)
    expect(await interrupt(dev)).not.toBe("still running")
    return result
  } catch (error) {
    console.error(dev.output())
    throw error
  } finally {
    dev.process.kill("SIGKILL")
  }
}

/** `preheat status ARGS` against the dev cluster, as a user types it next to kubectl: its output. */
export const preheatStatus = (dev: DevProcess, args: ReadonlyArray<string>): Promise<string> =>
  new Promise<string>((done, fail) =>
    execFile(
      nodeLauncher.file,
      [...nodeLauncher.args, "status", ...args, "--kubeconfig", dev.kubeconfig],
      { timeout: 60_000 },
      (error, stdout, stderr) => (error === null ? done(stdout) : fail(new Error(stderr)))
    )
  )
