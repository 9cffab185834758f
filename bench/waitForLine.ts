import type { ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"

/** Resolves with the first stdout/stderr line `pick` returns a value for; fails if the process exits first. */
export const waitForLine = <A>(child: ChildProcess, what: string, pick: (line: string) => A | undefined): Promise<A> =>
  new Promise((resolve, reject) => {
    const seen: Array<string> = []
    const onLine = (line: string) => {
      seen.push(line)
      const value = pick(line)
      if (value !== undefined) resolve(value)
    }
    for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on("line", onLine)
    child.once("exit", (code, signal) => reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${seen.join("\n")}`)))
  })
