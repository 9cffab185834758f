// The status view in a real pseudo-terminal, against a local cluster from `preheat dev`: the one
// place the TTY detection, colours and in-place redraws are exercised end to end. util-linux's
// `script` provides the terminal (it runs the command on a fresh pty and copies the screen out).
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const repo = join(import.meta.dirname, "../..")
const main = join(repo, "src/main.ts")
const node = [process.execPath, "--experimental-strip-types", "--no-warnings"]
const script = "/usr/bin/script"
const kubectl = "/usr/bin/kubectl"
const available = existsSync(script) && existsSync(kubectl)

/** Resolves with the output once `done` holds for it; rejects after `ms`. */
const outputUntil = (child: ChildProcess, done: (output: string) => boolean, ms: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let output = ""
    const timer = setTimeout(() => reject(new Error(`timed out; output so far:\n${output}`)), ms)
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (done(output)) {
        clearTimeout(timer)
        resolve(output)
      }
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
  })

const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    // Detached children lead their own process group: signal the group, so nothing is left behind.
    if (child.pid !== undefined) process.kill(-child.pid, signal)
  })

describe.skipIf(!available)("preheat status in a terminal", () => {
  const directory = mkdtempSync(join(tmpdir(), "preheat-status-"))
  const kubeconfig = join(directory, "kubeconfig")
  let dev: ChildProcess | undefined

  beforeAll(async () => {
    dev = spawn(node[0]!, [...node.slice(1), main, "dev", "--nodes", "3", "--kubeconfig", kubeconfig], {
      cwd: repo,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    await outputUntil(dev, (o) => o.includes("Ctrl-C stops everything"), 30_000)
    execFileSync(kubectl, ["--kubeconfig", kubeconfig, "apply", "-f", join(repo, "deploy/examples/job-with-always.yaml")], {
      env: { ...process.env, HOME: directory }
    })
  }, 60_000)

  afterAll(async () => {
    if (dev !== undefined) await stop(dev, "SIGINT")
  })

  it("shows the job's name and a block bar, redrawn in place", async () => {
    const command = [...node, main, "status", "job-with-always", "--watch", "--kubeconfig", kubeconfig].map((a) => `'${a}'`).join(" ")
    const view = spawn(script, ["-qfec", command, "/dev/null"], {
      cwd: repo,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TERM: "xterm-256color", NO_COLOR: "" }
    })
    try {
      // Two frames: the first draw and one redraw over it (the view redraws every second).
      const output = await outputUntil(view, (o) => o.split("namespace default").length > 2, 20_000)
      const screen = stripVTControlCharacters(output)
      expect(screen).toContain("job-with-always")
      expect(screen).toMatch(/[█░]{10,}/)
      // A TTY gets colours and a cursor-up redraw; plain mode has neither.
      expect(output).not.toBe(screen)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's escape sequence is what is checked
      expect(output).toMatch(/\u001b\[\d+A/)
    } finally {
      await stop(view, "SIGTERM")
    }
  }, 60_000)
})
