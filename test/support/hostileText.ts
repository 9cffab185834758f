// User strings built to attack a terminal, and the check that none of their characters came out raw.

/** An image reference that sets the terminal's title (ESC ] 0 ; ... BEL) and reverses the text after it. */
export const titleEscapeReference = "nginx\x1b]0;pwned\x07\u202e:latest"

// A line feed is allowed: it is how kubectl and the loggers end lines (goQuote escapes any in a value).
const isRawControl = (code: number): boolean =>
  (code < 0x20 && code !== 0x0a) ||
  (code >= 0x7f && code <= 0x9f) ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2060 && code <= 0x2069) ||
  code === 0xfeff

/** The C0 (but line feed) and C1 controls, DEL, bidi controls and zero-width characters found raw in `text`, as hex code points. */
export const rawControls = (text: string): ReadonlyArray<string> =>
  [...text].flatMap((character) => {
    const code = character.codePointAt(0) ?? 0
    return isRawControl(code) ? [code.toString(16)] : []
  })
