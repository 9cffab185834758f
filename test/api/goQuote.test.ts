import { describe, expect, it } from "vitest"
import { escapeForeignText, goQuote, maxForeignCharacters, maxQuotedCharacters, quoteBounded } from "../../src/api/goQuote.ts"
// Go's own output (go run test/api/goQuoteTable.go): fmt's %q of each input, and the code points
// Go's strconv.IsPrint rejects.
import table from "./goQuoteTable.json" with { type: "json" }
import { rawControls } from "../support/hostileText.ts"

type Ranges = ReadonlyArray<readonly [number, number]>
const inRanges = (ranges: Ranges, code: number): boolean => ranges.some(([from, to]) => code >= from && code <= to)
const notPrintable = table.notPrintable as unknown as Ranges
const unassigned = table.unassigned as unknown as Ranges

describe("goQuote: Go's strconv.Quote", () => {
  it.each(table.cases)("$name as Go quotes it", ({ input, quoted }) => {
    expect(goQuote(input)).toBe(quoted)
  })

  it("escapes exactly the assigned code points Go's IsPrint rejects", () => {
    const wrong: Array<string> = []
    for (let code = 0; code < 0x20000; code++) {
      if ((code >= 0xd800 && code <= 0xdfff) || inRanges(unassigned, code)) continue
      const character = String.fromCodePoint(code)
      const kept = goQuote(character) === `"${character}"` || character === '"' || character === "\\"
      if (kept === inRanges(notPrintable, code)) wrong.push(code.toString(16))
    }
    expect(wrong).toEqual([])
  })

  it("writes a lone surrogate as \\ufffd, as Go writes a rune that is not a character", () => {
    expect(goQuote("a\ud800b")).toBe('"a\\ufffdb"')
    expect(goQuote("\udc00")).toBe('"\\ufffd"')
    expect(goQuote("\udbff\ud83d\udc4d")).toBe('"\\ufffd\ud83d\udc4d"')
  })

  it("quotes a 5,000-character value whole (goQuote is not bounded)", () => {
    const long = "a".repeat(5000)
    expect(goQuote(long)).toBe(`"${long}"`)
  })
})

describe("quoteBounded", () => {
  it("quotes a value within the bound as goQuote does", () => {
    for (const { input, quoted } of table.cases) expect(quoteBounded(input)).toBe(quoted)
    const reference = `registry.example.com/${"a".repeat(maxQuotedCharacters - 21)}`
    expect(reference).toHaveLength(maxQuotedCharacters)
    expect(quoteBounded(reference)).toBe(`"${reference}"`)
  })

  it("cuts a 5,000-character value to the bound, quotes closed, then an ellipsis", () => {
    const quoted = quoteBounded("a".repeat(5000))
    expect(quoted).toBe(`"${"a".repeat(maxQuotedCharacters)}"...`)
  })

  it("never cuts inside an escape", () => {
    // Eight characters of room: "ab" and one \x1b fit (2 + 4 = 6), the next \x1b (4 more) does not.
    expect(quoteBounded("ab\x1b\x1b\x1b", 8)).toBe('"ab\\x1b"...')
    expect(quoteBounded("\u202e".repeat(10), 13)).toBe('"\\u202e\\u202e"...')
    expect(quoteBounded(`x${"\u{e0001}"}`, 10)).toBe('"x"...')
  })

  it("never splits a surrogate pair: a printable astral character counts one", () => {
    const thumbs = "\u{1f44d}"
    expect(quoteBounded(thumbs.repeat(5), 3)).toBe(`"${thumbs.repeat(3)}"...`)
    expect(quoteBounded(thumbs.repeat(3), 3)).toBe(`"${thumbs.repeat(3)}"`)
  })

  it("leaves nothing hostile in a hostile, long reference", () => {
    const reference = `nginx\x1b]0;pwned\x07\u202e${"x".repeat(5000)}:latest`
    const quoted = quoteBounded(reference)
    expect(rawControls(quoted)).toEqual([])
    expect(rawControls(reference)).not.toEqual([])
    expect(quoted.startsWith('"nginx\\x1b]0;pwned\\a\\u202ex')).toBe(true)
    expect(quoted.length).toBeLessThanOrEqual(maxQuotedCharacters + 5)
  })
})

describe("escapeForeignText", () => {
  it("keeps an ordinary runtime error as it is", () => {
    const error = 'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:nope": not found'
    expect(escapeForeignText(error)).toBe(error)
  })

  it("escapes the controls a hostile reference brings into a runtime error, keeping quotes and backslashes", () => {
    const error = 'failed to pull image "nginx\x1b]0;pwned\x07\u202e": a\\b'
    expect(escapeForeignText(error)).toBe('failed to pull image "nginx\\x1b]0;pwned\\a\\u202e": a\\b')
  })

  it("cuts a long message, without splitting an escape", () => {
    const error = `${"e".repeat(5000)}`
    expect(escapeForeignText(error)).toBe(`${"e".repeat(maxForeignCharacters)}...`)
    expect(escapeForeignText("abc\n\n", 6)).toBe("abc\\n...")
  })
})
