import { styleText } from "node:util"
import { escapeForeignText } from "../api/goQuote.ts"

export type Style = "green" | "red" | "yellow" | "cyan" | "dim" | "bold"

/** A piece of a line with an optional style; styles only show in terminal mode. */
export interface Segment {
  readonly text: string
  readonly style?: Style
}

export const seg = (text: string, style?: Style): Segment => (style === undefined ? { text } : { text, style })

/**
 * Joins segments into one line cut to `width` visible characters. Cutting happens before styling,
 * so an escape sequence is never split and a redraw never wraps (which would break line counts).
 * The segments carry what users and other programs wrote (job names, images, status messages): their
 * non-printable characters are escaped first (goQuote.ts), so none moves the cursor, retitles the
 * terminal or reorders the line; the screen's edge may then cut through an escape like any word.
 */
export const toLine = (segments: ReadonlyArray<Segment>, width: number, styled: boolean): string => {
  let room = width
  let out = ""
  for (const segment of segments) {
    if (room <= 0) break
    const text = [...escapeForeignText(segment.text, Number.POSITIVE_INFINITY)].slice(0, room).join("")
    room -= [...text].length
    // validateStream: false — whether to colour is the caller's decision (mode), not the stream's.
    out += styled && segment.style !== undefined && text !== "" ? styleText(segment.style, text, { validateStream: false }) : text
  }
  return out
}
