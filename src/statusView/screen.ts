import { clearScreenDown, cursorTo, moveCursor } from "node:readline"
import type { RenderMode } from "./render.ts"

/** Where frames go: printed once, appended (plain) or redrawn in place (terminal). */
export interface Screen {
  readonly mode: RenderMode
  /** Columns to fit lines into; plain output is never cut (a pipe has no width). */
  readonly width: () => number
  readonly draw: (lines: ReadonlyArray<string>) => void
}

/**
 * The screen of a stream: terminal mode when it is a TTY, plain otherwise. A terminal frame
 * replaces the previous one (cursor up over its lines, clear below) using Node's readline
 * cursor helpers; plain frames follow each other, separated by a blank line.
 */
export const streamScreen = (stream: NodeJS.WriteStream): Screen => {
  const mode: RenderMode = stream.isTTY === true ? "terminal" : "plain"
  let previous: number | undefined
  return {
    mode,
    // One column short of the edge: writing the last column wraps on some terminals.
    width: () => (mode === "terminal" ? Math.max(20, (stream.columns || 80) - 1) : Number.POSITIVE_INFINITY),
    draw: (lines) => {
      if (previous !== undefined) {
        if (mode === "terminal") {
          moveCursor(stream, 0, -previous)
          cursorTo(stream, 0)
          clearScreenDown(stream)
        } else {
          stream.write("\n")
        }
      }
      stream.write(lines.map((l) => `${l}\n`).join(""))
      previous = lines.length
    }
  }
}
