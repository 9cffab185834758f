import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  dns1123SubdomainPattern,
  labelValuePattern,
  qualifiedNamePattern,
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabelValue,
  validateQualifiedName
} from "../../src/api/objectNames.ts"

// Expected wording is spelled out literally (not built from the module) so that a change in
// the implementation's message helpers shows up here. Note apimachinery's double space before "or".
const nameRegexMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const subdomainRegexMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const labelValueRegexMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const tooManySlashesMsg =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' " +
  "(e.g. 'example.com/MyName')"

// 253 characters: three 63-character labels and one of 61, joined by dots.
const longestSubdomain = `${"a".repeat(63)}.`.repeat(3) + "a".repeat(61)

describe("patterns", () => {
  it("exports apimachinery's regex sources for the CRD generator", () => {
    expect(dns1123SubdomainPattern).toBe("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
    expect(qualifiedNamePattern).toBe("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
    expect(labelValuePattern).toBe("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
  })
})

describe("validateQualifiedName", () => {
  it.each([
    "a",
    "A",
    "1",
    "MyName",
    "my.name",
    "123-abc",
    "a_b-c.d",
    "kubernetes.io/hostname",
    "example.com/MyName",
    "a".repeat(63),
    `${longestSubdomain}/a`
  ])("accepts %j", (key) => {
    expect(validateQualifiedName(key)).toEqual([])
  })

  it.each<[string, ReadonlyArray<string>]>([
    ["", ["name part must be non-empty", nameRegexMsg]],
    ["-a", [nameRegexMsg]],
    ["a-", [nameRegexMsg]],
    ["a b", [nameRegexMsg]],
    ["a/", ["name part must be non-empty", nameRegexMsg]],
    ["/a", ["prefix part must be non-empty"]],
    ["/", ["prefix part must be non-empty", "name part must be non-empty", nameRegexMsg]],
    ["a/b/c", [tooManySlashesMsg]],
    ["Example.com/a", [`prefix part ${subdomainRegexMsg}`]],
    ["a_b/c", [`prefix part ${subdomainRegexMsg}`]],
    ["a".repeat(64), ["name part must be no more than 63 characters"]],
    [`-${"a".repeat(63)}`, ["name part must be no more than 63 characters", nameRegexMsg]],
    [`a${longestSubdomain}/a`, ["prefix part must be no more than 253 characters"]],
    ["é", [nameRegexMsg]],
    // apimachinery counts UTF-8 bytes: 32 × 2 bytes is over 63.
    ["é".repeat(32), ["name part must be no more than 63 characters", nameRegexMsg]],
    ["a\n", [nameRegexMsg]]
  ])("rejects %j", (key, expected) => {
    expect(validateQualifiedName(key)).toEqual(expected)
  })
})

describe("validateLabelValue", () => {
  it.each(["", "a", "MyValue", "my_value", "12345", "a.b-c_d", "a".repeat(63)])("accepts %j", (v) => {
    expect(validateLabelValue(v)).toEqual([])
  })

  it.each<[string, ReadonlyArray<string>]>([
    ["-a", [labelValueRegexMsg]],
    ["a.", [labelValueRegexMsg]],
    ["a b", [labelValueRegexMsg]],
    ["a/b", [labelValueRegexMsg]],
    ["a".repeat(64), ["must be no more than 63 characters"]],
    [`_${"a".repeat(63)}`, ["must be no more than 63 characters", labelValueRegexMsg]]
  ])("rejects %j", (v, expected) => {
    expect(validateLabelValue(v)).toEqual(expected)
  })
})

describe("validateDns1123Subdomain", () => {
  it.each(["a", "0", "example.com", "a-b.c-d", "node-1.example.com", longestSubdomain])("accepts %j", (name) => {
    expect(validateDns1123Subdomain(name)).toEqual([])
  })

  it.each<[string, ReadonlyArray<string>]>([
    ["", [subdomainRegexMsg]],
    ["Example", [subdomainRegexMsg]],
    ["a_b", [subdomainRegexMsg]],
    ["a..b", [subdomainRegexMsg]],
    [".a", [subdomainRegexMsg]],
    ["a-", [subdomainRegexMsg]],
    ["a.-b", [subdomainRegexMsg]],
    [`a${longestSubdomain}`, ["must be no more than 253 characters"]],
    [`${longestSubdomain}-`, ["must be no more than 253 characters", subdomainRegexMsg]]
  ])("rejects %j", (name, expected) => {
    expect(validateDns1123Subdomain(name)).toEqual(expected)
  })
})

describe("validateDns1123Label (namespace names)", () => {
  const labelRegexMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an " +
    "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
  it.each(["a", "0", "eraser-system", "a".repeat(63)])("accepts %j", (name) => {
    expect(validateDns1123Label(name)).toEqual([])
  })

  it.each<[string, ReadonlyArray<string>]>([
    ["", [labelRegexMsg]],
    ["Eraser", [labelRegexMsg]],
    ["eraser.system", [labelRegexMsg]],
    ["-a", [labelRegexMsg]],
    ["a".repeat(64), ["must be no more than 63 characters"]]
  ])("rejects %j", (name, expected) => {
    expect(validateDns1123Label(name)).toEqual(expected)
  })
})

describe("properties", () => {
  const anyString = fc.oneof(
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.string({ unit: fc.constantFrom("a", "Z", "0", "-", "_", ".", "/", "é", " "), maxLength: 300 })
  )
  const isStringArray = (xs: ReadonlyArray<unknown>) => xs.every((x) => typeof x === "string")

  it("(d) validators never throw and return strings on arbitrary input", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        expect(isStringArray(validateQualifiedName(s))).toBe(true)
        expect(isStringArray(validateLabelValue(s))).toBe(true)
        expect(isStringArray(validateDns1123Subdomain(s))).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })

  it("generated well-formed keys, values and subdomains are accepted", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/)
    const subdomain = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?){0,4}$/)
    fc.assert(
      fc.property(fc.option(subdomain, { nil: undefined }), name, (prefix, n) => {
        expect(validateQualifiedName(prefix === undefined ? n : `${prefix}/${n}`)).toEqual([])
        expect(validateLabelValue(n)).toEqual([])
        if (prefix !== undefined) expect(validateDns1123Subdomain(prefix)).toEqual([])
      })
    )
  })

  it("a label value is valid exactly when it is empty or a valid unprefixed qualified name", () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const asValue = validateLabelValue(s).length === 0
        const asName = !s.includes("/") && validateQualifiedName(s).length === 0
        expect(asValue).toBe(s === "" || asName)
      }),
      { numRuns: 2000 }
    )
  })
})
