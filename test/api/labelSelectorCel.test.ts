// The selector rules of the CRDs against the decoder's validateLabelSelector: the same selectors
// refused, each CRD message one the decoder gives, on chosen cases and on generated selectors.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { crdOf, kinds } from "../../src/api/crd/manifests.ts"
import { notPrintableAscii } from "../../src/api/goQuoteCel.ts"
import { type LabelSelector, validateLabelSelector } from "../../src/api/labelSelector.ts"
import { celViolations } from "../../harness/apiserver/admission/celRules.ts"
import type { StructuralSchema } from "../../harness/apiserver/admission/structuralSchema.ts"

const specSchema = (() => {
  const root = crdOf(kinds.find((k) => k.kind === "ImagePullJob")!).spec.versions.at(-1)!.schema.openAPIV3Schema as StructuralSchema
  return root.properties!["spec"]!
})()

const celMessages = (selector: LabelSelector): ReadonlyArray<string> =>
  celViolations(specSchema, { image: "nginx", podSelector: selector }).map((v) => v.message)
const decoderMessages = (selector: LabelSelector): ReadonlyArray<string> =>
  validateLabelSelector(selector).map((why) => `invalid podSelector: ${why}`)

/**
 * A decoder message as the CRD rules word it: CEL cannot escape what goQuote escapes beyond
 * \\ \" \n \r \t, so it shows `(not printable ASCII)` instead of any other quoted string.
 */
const celForm = (message: string): string =>
  message.replace(/"(?:[^"\\]|\\.)*"/g, (quoted) => (/^"(?:[ !#-[\]-~]|\\[\\"nrt])*"$/.test(quoted) ? quoted : notPrintableAscii))

/** Both refuse the same selectors, and every CRD message is one the decoder gives. */
const expectAgreement = (selector: LabelSelector): void => {
  const cel = celMessages(selector)
  const decoder = decoderMessages(selector).map(celForm)
  expect(cel.length > 0, JSON.stringify({ selector, cel, decoder })).toBe(decoder.length > 0)
  for (const message of cel) expect(decoder, JSON.stringify(selector)).toContain(message)
}

const nameRegexMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const valueRegexMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

describe("label selector CEL rules", () => {
  it.each<[string, LabelSelector, string]>([
    ["a key with a space", { matchLabels: { "bad key!": "v" } }, `matchLabels: Invalid value: "bad key!": ${nameRegexMsg}`],
    ["a value with a space", { matchLabels: { app: "a b" } }, `matchLabels: Invalid value: "a b": ${valueRegexMsg}`],
    ["an empty prefix", { matchLabels: { "/x": "" } }, `matchLabels: Invalid value: "/x": prefix part must be non-empty`],
    ["an empty name", { matchLabels: { "x/": "" } }, `matchLabels: Invalid value: "x/": name part must be non-empty`],
    [
      "a long name",
      { matchLabels: { [`a${"b".repeat(63)}`]: "" } },
      `matchLabels: Invalid value: "a${"b".repeat(63)}": name part must be no more than 63 characters`
    ],
    [
      "a long prefix",
      { matchLabels: { [`${"p".repeat(254)}/x`]: "" } },
      `matchLabels: Invalid value: "${"p".repeat(254)}/x": prefix part must be no more than 253 characters`
    ],
    [
      "quotes and newlines, escaped as Go's %q",
      { matchLabels: { app: 'say "hi"\\\n' } },
      `matchLabels: Invalid value: "say \\"hi\\"\\\\\\n": ${valueRegexMsg}`
    ],
    [
      "an expression's key",
      {
        matchExpressions: [
          { key: "ok", operator: "Exists" },
          { key: "a/b/c", operator: "Exists" }
        ]
      },
      "matchExpressions[1].key: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', " +
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " +
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ],
    [
      "an expression's value",
      {
        matchExpressions: [
          { key: "a", operator: "In", values: ["x"] },
          { key: "b", operator: "NotIn", values: ["y", "z!"] }
        ]
      },
      `matchExpressions[1].values[1]: Invalid value: "z!": ${valueRegexMsg}`
    ]
  ])("%s", (_, selector, why) => {
    expect(celMessages(selector)).toContain(`invalid podSelector: ${why}`)
    expect(decoderMessages(selector)).toContain(`invalid podSelector: ${why}`)
    expectAgreement(selector)
  })

  it("escape a terminal's control sequence in the decoder, and leave it out in the CRD rules", () => {
    const selector: LabelSelector = { matchLabels: { app: "x\x1b]0;pwned\x07\u202e" } }
    expect(decoderMessages(selector)).toEqual([
      `invalid podSelector: matchLabels: Invalid value: "x\\x1b]0;pwned\\a\\u202e": ${valueRegexMsg}`
    ])
    expect(celMessages(selector)).toEqual([`invalid podSelector: matchLabels: Invalid value: ${notPrintableAscii}: ${valueRegexMsg}`])
  })

  it("accept what the decoder accepts", () => {
    const selector: LabelSelector = {
      matchLabels: { "kubernetes.io/hostname": "node-1", app: "", [`${"p".repeat(253)}/${"n".repeat(63)}`]: "v".repeat(63) },
      matchExpressions: [
        { key: "example.com/Tier_1", operator: "In", values: ["a.b-c_d", ""] },
        { key: "x", operator: "DoesNotExist" }
      ]
    }
    expect(celMessages(selector)).toEqual([])
    expect(decoderMessages(selector)).toEqual([])
  })

  it("agree on generated selectors", () => {
    // The label alphabet, its separators, characters goQuote escapes, and a non-ASCII letter.
    const text = fc.string({ unit: fc.constantFrom(...'aZ09-_./ !"\\\n\té'), maxLength: 12 })
    // Around the length limits of a prefix (253) and of a name or value (63).
    const long = fc.integer({ min: 60, max: 260 }).map((n) => "a".repeat(n))
    const part = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: long })
    const key = fc.oneof(
      part,
      fc.tuple(part, part).map(([p, n]) => `${p}/${n}`)
    )
    const value = fc.oneof(
      text,
      fc.integer({ min: 60, max: 66 }).map((n) => "v".repeat(n))
    )
    const requirement = fc.record(
      {
        key,
        operator: fc.constantFrom("In", "NotIn", "Exists", "DoesNotExist", "Is", 'in "x"\\'),
        values: fc.array(value, { maxLength: 3 })
      },
      { requiredKeys: ["key", "operator"] }
    )
    const selector = fc.record(
      { matchLabels: fc.dictionary(key, value, { maxKeys: 3 }), matchExpressions: fc.array(requirement, { maxLength: 3 }) },
      { requiredKeys: [] }
    )
    fc.assert(fc.property(selector, expectAgreement), { numRuns: 1000 })
  })
})
