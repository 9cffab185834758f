import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatLabelSelector, type LabelSelector, matchesLabelSelector } from "../../../../src/api/labelSelector.ts"
import { parseFieldSelector, parseLabelSelector } from "../../../../harness/apiserver/storage/selectorQuery.ts"

const labels = (selector: string) => {
  const parsed = parseLabelSelector(selector)
  if (Result.isFailure(parsed)) throw new Error(`unexpected: ${parsed.failure.message}`)
  return parsed.success
}

const labelError = (selector: string): string => {
  const parsed = parseLabelSelector(selector)
  if (Result.isSuccess(parsed)) throw new Error(`${selector} parsed`)
  expect(parsed.failure._tag).toBe("SelectorParseError")
  expect(parsed.failure.selector).toBe(selector)
  return parsed.failure.message
}

const fields = (selector: string) => {
  const parsed = parseFieldSelector(selector)
  if (Result.isFailure(parsed)) throw new Error(`unexpected: ${parsed.failure.message}`)
  return parsed.success
}

const fieldError = (selector: string): string => {
  const parsed = parseFieldSelector(selector)
  if (Result.isSuccess(parsed)) throw new Error(`${selector} parsed`)
  return parsed.failure.message
}

describe("parseLabelSelector", () => {
  it("parses every operator into sorted requirements", () => {
    expect(labels("b=1,a==2,c!=3").requirements).toEqual([
      { key: "a", operator: "==", values: ["2"] },
      { key: "b", operator: "=", values: ["1"] },
      { key: "c", operator: "!=", values: ["3"] }
    ])
    expect(labels("env in (prod, dev,prod), tier notin (db)").requirements).toEqual([
      { key: "env", operator: "in", values: ["dev", "prod"] },
      { key: "tier", operator: "notin", values: ["db"] }
    ])
    expect(labels("a,!b").requirements).toEqual([
      { key: "a", operator: "exists", values: [] },
      { key: "b", operator: "!", values: [] }
    ])
    expect(labels("n>5,m<10").requirements).toEqual([
      { key: "m", operator: "lt", values: ["10"] },
      { key: "n", operator: "gt", values: ["5"] }
    ])
    expect(labels("example.com/role=worker").requirements).toEqual([{ key: "example.com/role", operator: "=", values: ["worker"] }])
  })

  it("takes empty values where apimachinery does", () => {
    expect(labels("a=").requirements).toEqual([{ key: "a", operator: "=", values: [""] }])
    expect(labels("a in ()").requirements).toEqual([{ key: "a", operator: "in", values: [""] }])
    expect(labels("a in (,x)").requirements).toEqual([{ key: "a", operator: "in", values: ["", "x"] }])
    expect(labels("a in (x,)").requirements).toEqual([{ key: "a", operator: "in", values: ["", "x"] }])
  })

  it("treats in and notin as names where a name is expected", () => {
    expect(labels("in=notin").requirements).toEqual([{ key: "in", operator: "=", values: ["notin"] }])
    expect(labels("x in (in,notin)").requirements).toEqual([{ key: "x", operator: "in", values: ["in", "notin"] }])
  })

  it("matches labels as the API server does", () => {
    const set = { tier: "web", zone: "2", count: "7" }
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      ["", true],
      ["  ", true],
      ["tier=web", true],
      ["tier==web", true],
      ["tier=db", false],
      ["tier!=db", true],
      ["missing!=x", true],
      ["tier in (db,web)", true],
      ["tier notin (web)", false],
      ["missing notin (web)", true],
      ["missing in (web)", false],
      ["zone", true],
      ["missing", false],
      ["!missing", true],
      ["!zone", false],
      ["count>6", true],
      ["count>7", false],
      ["count<8", true],
      ["tier>1", false],
      ["missing<100", false],
      ["tier=web,zone=2", true],
      ["tier=web,zone=3", false]
    ]
    for (const [selector, expected] of cases) expect([selector, labels(selector).matches(set)]).toEqual([selector, expected])
    expect(labels("!a").matches(undefined)).toBe(true)
    expect(labels("a").matches(undefined)).toBe(false)
    expect(labels("constructor").matches({})).toBe(false)
  })

  it("rejects malformed selectors with apimachinery's messages", () => {
    expect(labelError("a b")).toBe("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")
    expect(labelError("a=b c")).toBe("found 'c', expected: ',' or 'end of string'")
    expect(labelError(",a")).toBe("found ',', expected: !, identifier, or 'end of string'")
    expect(labelError("a,")).toBe("found '', expected: identifier after ','")
    expect(labelError("a=b,,c")).toBe("found ',', expected: identifier after ','")
    expect(labelError("a in x")).toBe("unable to parse requirement: found 'x' expected: '('")
    expect(labelError("a in (x")).toBe("unable to parse requirement: found '', expected: ',' or ')'")
    expect(labelError("a in (x y)")).toBe("unable to parse requirement: found 'y', expected: ',' or ')'")
    expect(labelError("a in (=)")).toBe("unable to parse requirement: found '=', expected: ',', ')' or identifier")
    expect(labelError("a==(")).toBe("unable to parse requirement: found '(', expected: identifier")
    expect(labelError("!")).toBe("unable to parse requirement: found '', expected: identifier")
    expect(labelError("!a=b")).toBe("found '=', expected: ',' or 'end of string'")
    expect(labelError("a>x")).toBe(
      "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
    )
  })

  it("validates keys and values as label syntax", () => {
    expect(labelError("-a=b")).toMatch(/^unable to parse requirement: <nil>: Invalid value: "-a": name part must consist of/)
    expect(labelError("a/b/c")).toMatch(/^unable to parse requirement: <nil>: Invalid value: "a\/b\/c": a qualified name /)
    expect(labelError("a=b:c")).toMatch(/^unable to parse requirement: values\[0\]: Invalid value: "b:c": a valid label must/)
    expect(labelError("a in (ok,-bad)")).toMatch(/values\[0\]: Invalid value: "-bad"/)
  })

  it("reads back what formatLabelSelector writes, with the same meaning", () => {
    const key = fc.constantFrom("app", "tier", "example.com/zone")
    const value = fc.constantFrom("a", "b", "web-1")
    const selector: fc.Arbitrary<LabelSelector> = fc.record({
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({ key, operator: fc.constantFrom("In", "NotIn"), values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }) }),
          fc.record({ key, operator: fc.constantFrom("Exists", "DoesNotExist") })
        ),
        { maxLength: 3 }
      )
    })
    const labelSet = fc.dictionary(key, value, { maxKeys: 3 })
    fc.assert(
      fc.property(selector, labelSet, (s, set) => {
        expect(labels(formatLabelSelector(s)).matches(set)).toBe(matchesLabelSelector(s, set))
      })
    )
  })
})

describe("parseFieldSelector", () => {
  it("parses =, == and != terms", () => {
    expect(fields("metadata.name=a,spec.nodeName==n,status.phase!=Failed").requirements).toEqual([
      { field: "metadata.name", operator: "=", value: "a" },
      { field: "spec.nodeName", operator: "=", value: "n" },
      { field: "status.phase", operator: "!=", value: "Failed" }
    ])
    expect(fields("").requirements).toEqual([])
    expect(fields("a=").requirements).toEqual([{ field: "a", operator: "=", value: "" }])
  })

  it("unescapes backslash, comma and equals in values", () => {
    expect(fields("a=x\\,y\\=z\\\\").requirements).toEqual([{ field: "a", operator: "=", value: "x,y=z\\" }])
  })

  it("matches a missing field as the empty string", () => {
    const get = (f: string) => (({ "metadata.name": "a", "status.phase": "Running" }) as Record<string, string>)[f]
    expect(fields("metadata.name=a").matches(get)).toBe(true)
    expect(fields("metadata.name=b").matches(get)).toBe(false)
    expect(fields("metadata.name!=b,status.phase=Running").matches(get)).toBe(true)
    expect(fields("spec.nodeName=").matches(get)).toBe(true)
    expect(fields("spec.nodeName!=").matches(get)).toBe(false)
  })

  it("rejects malformed selectors with apimachinery's messages", () => {
    expect(fieldError("metadata.name")).toBe("invalid selector: 'metadata.name'; can't understand 'metadata.name'")
    expect(fieldError("a=b=c")).toBe("invalid field selector: unescaped character =")
    expect(fieldError("a=\\x")).toBe("invalid field selector: invalid escape sequence: \\x")
    expect(fieldError("a=x\\")).toBe("invalid field selector: invalid escape sequence: \\")
  })
})
