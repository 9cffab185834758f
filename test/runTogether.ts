// `node test/runTogether.ts SCRIPT...`: runs the npm scripts named at the same time, for the
// tiers whose processes mostly wait in real time (npm test: the system and fault tiers). The
// first script's output is shown as it comes; each other's is held and shown whole once the ones
// before it are done, so every tier's output reads as if it ran alone. Exits with the first
// failing script's code, 0 when every one passed.
import { spawn } from "node:child_process"

const scripts = process.argv.slice(2)
if (scripts.length === 0) throw new Error("usage: node test/runTogether.ts SCRIPT...")

interface Run {
  readonly script: string
  /** What it wrote, in order, each chunk with the stream it went to. */
  readonly held: Array<{ readonly stream: NodeJS.WriteStream; readonly chunk: Buffer }>
  readonly code: Promise<number>
}

const children: Array<ReturnType<typeof spawn>> = []

const start = (script: string, live: boolean): Run => {
  const child = spawn("npm", ["run", script], { stdio: ["ignore", live ? "inherit" : "pipe", live ? "inherit" : "pipe"] })
  children.push(child)
  const held: Run["held"] = []
  child.stdout?.on("data", (chunk: Buffer) => held.push({ stream: process.stdout, chunk }))
  child.stderr?.on("data", (chunk: Buffer) => held.push({ stream: process.stderr, chunk }))
  const code = new Promise<number>((done) => child.once("close", (exit, signal) => done(exit ?? (signal === null ? 1 : 128))))
  return { script, held, code }
}

// Stopped from outside (Ctrl-C, a CI timeout): the scripts stop with it.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill(signal)
  })
}

const runs = scripts.map((script, i) => start(script, i === 0))
let failed = 0
for (const run of runs) {
  const code = await run.code
  for (const { stream, chunk } of run.held) stream.write(chunk)
  if (code !== 0) {
    process.stderr.write(`\nnpm run ${run.script} failed (exit ${code})\n`)
    if (failed === 0) failed = code
  }
}
process.exitCode = failed
