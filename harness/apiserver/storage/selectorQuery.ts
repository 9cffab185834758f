// The query-string selectors of list and watch (`labelSelector=`, `fieldSelector=`), parsed as
// k8s.io/apimachinery's labels.Parse and fields.ParseSelector do, with their error wording, so a
// selector means the same (and fails the same way) in memory as on a real API server.
import { Data, Result } from "effect"
import { maxForeignCharacters, quoteBounded } from "../../../src/api/goQuote.ts"
import { validateLabelValue, validateQualifiedName } from "../../../src/api/objectNames.ts"

/** A selector string the API server would answer with 400 Bad Request. */
class SelectorParseError extends Data.TaggedError("SelectorParseError")<{
  readonly selector: string
  readonly message: string
}> {}

export type LabelOperator = "in" | "notin" | "=" | "==" | "!=" | "exists" | "!" | "gt" | "lt"

export interface LabelRequirement {
  readonly key: string
  readonly operator: LabelOperator
  /** Sorted and de-duplicated, as apimachinery keeps them. */
  readonly values: ReadonlyArray<string>
}

export interface LabelSelectorQuery {
  /** Sorted by key; empty matches everything. */
  readonly requirements: ReadonlyArray<LabelRequirement>
  readonly matches: (labels: Readonly<Record<string, string>> | undefined) => boolean
}

export interface FieldRequirement {
  readonly field: string
  readonly operator: "=" | "!="
  readonly value: string
}

export interface FieldSelectorQuery {
  readonly requirements: ReadonlyArray<FieldRequirement>
  /** `get` answers a field's value; a field the object lacks reads as "", as in apimachinery's fields.Set. */
  readonly matches: (get: (field: string) => string | undefined) => boolean
}

// ---- label selectors ---------------------------------------------------------------------------

type TokenKind = "id" | "in" | "notin" | "!" | "!=" | "=" | "==" | "(" | ")" | "," | ">" | "<" | "end"
interface Token {
  readonly kind: TokenKind
  readonly text: string
}

const isWhitespace = (c: string): boolean => c === " " || c === "\t" || c === "\r" || c === "\n"
const isSpecial = (c: string): boolean => c === "=" || c === "!" || c === "(" || c === ")" || c === "," || c === ">" || c === "<"

const lex = (input: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < input.length) {
    const c = input[i] ?? ""
    if (isWhitespace(c)) {
      i++
    } else if (isSpecial(c)) {
      // Longest match, as the Go lexer: only "!=" and "==" are two characters long.
      const two = input.slice(i, i + 2)
      const text = two === "!=" || two === "==" ? two : c
      tokens.push({ kind: text as TokenKind, text })
      i += text.length
    } else {
      let j = i
      while (j < input.length && !isWhitespace(input[j] ?? "") && !isSpecial(input[j] ?? "")) j++
      const text = input.slice(i, j)
      tokens.push({ kind: text === "in" ? "in" : text === "notin" ? "notin" : "id", text })
      i = j
    }
  }
  tokens.push({ kind: "end", text: "" })
  return tokens
}

// Go's %q for the label keys and values quoted in messages (a selector comes from a query string).
const quote = (s: string): string => quoteBounded(s, maxForeignCharacters)

const binaryOperators = "in, notin, =, ==, !=, gt, lt"

/** A parse step's outcome: the value, or apimachinery's message for what is wrong. */
type Parsed<A> = Result.Result<A, string>

/** The tokens and how far the parser has read them. */
class TokenCursor {
  readonly tokens: ReadonlyArray<Token>
  position = 0

  constructor(tokens: ReadonlyArray<Token>) {
    this.tokens = tokens
  }

  // In "values" context the keywords `in` and `notin` are plain identifiers (apimachinery's Values).
  private token(offset: number, asValue: boolean): Token {
    const t = this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] ?? { kind: "end", text: "" }
    return asValue && (t.kind === "in" || t.kind === "notin") ? { kind: "id", text: t.text } : t
  }
  lookahead(asValue = true): Token {
    return this.token(0, asValue)
  }
  consume(asValue = true): Token {
    const t = this.token(0, asValue)
    this.position++
    return t
  }
}

const parseRequirements = (cursor: TokenCursor): Parsed<Array<LabelRequirement>> => {
  const requirements: Array<LabelRequirement> = []
  for (;;) {
    const t = cursor.lookahead()
    if (t.kind === "end") return Result.succeed(requirements)
    if (t.kind !== "id" && t.kind !== "!") return Result.fail(`found '${t.text}', expected: !, identifier, or 'end of string'`)
    const parsed = parseRequirement(cursor)
    if (Result.isFailure(parsed)) return Result.fail(`unable to parse requirement: ${parsed.failure}`)
    requirements.push(parsed.success)
    const next = cursor.consume()
    if (next.kind === "end") return Result.succeed(requirements)
    if (next.kind !== ",") return Result.fail(`found '${next.text}', expected: ',' or 'end of string'`)
    const after = cursor.lookahead()
    if (after.kind !== "id" && after.kind !== "!") return Result.fail(`found '${after.text}', expected: identifier after ','`)
  }
}

const parseRequirement = (cursor: TokenCursor): Parsed<LabelRequirement> =>
  Result.gen(function* () {
    let negated = false
    let t = cursor.consume()
    if (t.kind === "!") {
      negated = true
      t = cursor.consume()
    }
    if (t.kind !== "id") return yield* Result.fail(`found '${t.text}', expected: identifier`)
    const key = t.text
    const keyErrors = validateQualifiedName(key)
    if (keyErrors.length > 0) return yield* Result.fail(`<nil>: Invalid value: ${quote(key)}: ${keyErrors.join("; ")}`)
    const ahead = cursor.lookahead().kind
    if (negated || ahead === "end" || ahead === ",") {
      return { key, operator: negated ? "!" : "exists", values: [] }
    }
    const operator = yield* parseOperator(cursor)
    const values = yield* operator === "in" || operator === "notin" ? parseValueSet(cursor) : parseExactValue(cursor)
    return yield* requirement(key, operator, values)
  })

const operators: Partial<Record<TokenKind, LabelOperator>> = {
  in: "in",
  notin: "notin",
  "=": "=",
  "==": "==",
  "!=": "!=",
  ">": "gt",
  "<": "lt"
}

const parseOperator = (cursor: TokenCursor): Parsed<LabelOperator> => {
  const t = cursor.consume(false)
  const operator = operators[t.kind]
  return operator === undefined ? Result.fail(`found '${t.text}', expected: ${binaryOperators}`) : Result.succeed(operator)
}

const parseValueSet = (cursor: TokenCursor): Parsed<Array<string>> => {
  const open = cursor.consume()
  if (open.kind !== "(") return Result.fail(`found '${open.text}' expected: '('`)
  const t = cursor.lookahead()
  if (t.kind === ")") {
    cursor.consume()
    return Result.succeed([""])
  }
  if (t.kind !== "id" && t.kind !== ",") return Result.fail(`found '${t.text}', expected: ',', ')' or identifier`)
  const values = parseIdentifierList(cursor)
  if (Result.isFailure(values)) return values
  if (cursor.consume().kind !== ")") return Result.fail(`found '${t.text}', expected: ')'`)
  return values
}

// A (possibly empty) comma-separated list: "(a,,b)" and "(,a)" hold the empty value too.
const parseIdentifierList = (cursor: TokenCursor): Parsed<Array<string>> => {
  const values: Array<string> = []
  for (;;) {
    const t = cursor.consume()
    if (t.kind === "id") {
      values.push(t.text)
      const next = cursor.lookahead()
      if (next.kind === ",") continue
      if (next.kind === ")") return Result.succeed(values)
      return Result.fail(`found '${next.text}', expected: ',' or ')'`)
    } else if (t.kind === ",") {
      if (values.length === 0) values.push("")
      const next = cursor.lookahead()
      if (next.kind === ")") {
        values.push("")
        return Result.succeed(values)
      }
      if (next.kind === ",") {
        cursor.consume()
        values.push("")
      }
    } else {
      return Result.fail(`found '${t.text}', expected: ',', or identifier`)
    }
  }
}

const parseExactValue = (cursor: TokenCursor): Parsed<Array<string>> => {
  const ahead = cursor.lookahead()
  if (ahead.kind === "end" || ahead.kind === ",") return Result.succeed([""])
  const t = cursor.consume()
  return t.kind === "id" ? Result.succeed([t.text]) : Result.fail(`found '${t.text}', expected: identifier`)
}

const integerPattern = /^[+-]?\d+$/

// apimachinery's NewRequirement checks, for the cases the parser can produce.
const requirement = (key: string, operator: LabelOperator, raw: ReadonlyArray<string>): Parsed<LabelRequirement> => {
  const values = [...new Set(raw)].sort()
  for (const [i, value] of values.entries()) {
    const errors = validateLabelValue(value)
    if (errors.length > 0) return Result.fail(`values[${i}]: Invalid value: ${quote(value)}: ${errors.join("; ")}`)
  }
  if (operator === "gt" || operator === "lt") {
    for (const [i, value] of values.entries()) {
      if (!integerPattern.test(value)) {
        return Result.fail(`values[${i}]: Invalid value: ${quote(value)}: for 'Gt', 'Lt' operators, the value must be an integer`)
      }
    }
  }
  return Result.succeed({ key, operator, values })
}

const matchesRequirement = (r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean => {
  // Object.hasOwn so that keys like "constructor" are not found on the prototype.
  const present = Object.hasOwn(labels, r.key)
  const value = present ? (labels[r.key] ?? "") : ""
  switch (r.operator) {
    case "in":
    case "=":
    case "==":
      return present && r.values.includes(value)
    case "notin":
    case "!=":
      return !present || !r.values.includes(value)
    case "exists":
      return present
    case "!":
      return !present
    case "gt":
    case "lt": {
      if (!present || !integerPattern.test(value)) return false
      const have = BigInt(value)
      const want = BigInt(r.values[0] ?? "0")
      return r.operator === "gt" ? have > want : have < want
    }
  }
}

const noLabels: Readonly<Record<string, string>> = Object.freeze({})

/** Parses `a=b,a==b,a!=b,a in (x,y),a notin (x),a,!a,a>1,a<1`; "" selects everything. */
export const parseLabelSelector = (selector: string): Result.Result<LabelSelectorQuery, SelectorParseError> => {
  const parsed = parseRequirements(new TokenCursor(lex(selector)))
  if (Result.isFailure(parsed)) return Result.fail(new SelectorParseError({ selector, message: parsed.failure }))
  const requirements = parsed.success
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return Result.succeed({
    requirements,
    matches: (labels) => requirements.every((r) => matchesRequirement(r, labels ?? noLabels))
  })
}

// ---- field selectors ---------------------------------------------------------------------------

// Splits on commas not escaped by a backslash; escapes stay for unescapeValue.
const splitTerms = (selector: string): Array<string> => {
  if (selector.length === 0) return []
  const terms: Array<string> = []
  let start = 0
  let escaped = false
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]
    if (escaped) escaped = false
    else if (c === "\\") escaped = true
    else if (c === ",") {
      terms.push(selector.slice(start, i))
      start = i + 1
    }
  }
  terms.push(selector.slice(start))
  return terms
}

// The first operator from the left wins; at one position "!=" and "==" are tried before "=".
const splitTerm = (term: string): FieldRequirement | undefined => {
  for (let i = 0; i < term.length; i++) {
    for (const op of ["!=", "==", "="] as const) {
      if (term.startsWith(op, i)) {
        return { field: term.slice(0, i), operator: op === "!=" ? "!=" : "=", value: term.slice(i + op.length) }
      }
    }
  }
  return undefined
}

const unescapeValue = (value: string): Parsed<string> => {
  let out = ""
  let escaped = false
  for (const c of value) {
    if (escaped) {
      if (c !== "\\" && c !== "," && c !== "=") return Result.fail(`invalid field selector: invalid escape sequence: \\${c}`)
      out += c
      escaped = false
    } else if (c === "\\") {
      escaped = true
    } else if (c === "," || c === "=") {
      return Result.fail(`invalid field selector: unescaped character ${c}`)
    } else {
      out += c
    }
  }
  return escaped ? Result.fail("invalid field selector: invalid escape sequence: \\") : Result.succeed(out)
}

/**
 * Parses `f=v,f==v,f!=v` (values escape `\`, `,` and `=` with a backslash); "" selects everything.
 * Which fields a kind supports is the server's business: see the requirements.
 */
export const parseFieldSelector = (selector: string): Result.Result<FieldSelectorQuery, SelectorParseError> => {
  const requirements: Array<FieldRequirement> = []
  for (const term of splitTerms(selector).sort()) {
    if (term === "") continue
    const parsed = splitTerm(term)
    if (parsed === undefined) {
      return Result.fail(new SelectorParseError({ selector, message: `invalid selector: '${selector}'; can't understand '${term}'` }))
    }
    const value = unescapeValue(parsed.value)
    if (Result.isFailure(value)) return Result.fail(new SelectorParseError({ selector, message: value.failure }))
    requirements.push({ ...parsed, value: value.success })
  }
  return Result.succeed({
    requirements,
    matches: (get) => requirements.every((r) => ((get(r.field) ?? "") === r.value) === (r.operator === "="))
  })
}
