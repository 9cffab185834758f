import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  formatLabelSelector,
  isLabelSelectorOperator,
  LabelSelector,
  type LabelSelectorRequirement,
  labelSelectorOperators,
  matchesLabelSelector,
  validateLabelSelector
} from "../../src/api/labelSelector.ts"

const nameRegexMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
const labelValueRegexMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
const requiredValues = "Required value: must be specified when `operator` is 'In' or 'NotIn'"
const forbiddenValues = "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"

describe("schema", () => {
  const decode = Schema.decodeUnknownSync(LabelSelector)

  it("decodes selectors, leaving operator checks to validation", () => {
    expect(decode({})).toEqual({})
    const s = { matchLabels: { a: "b" }, matchExpressions: [{ key: "k", operator: "Bogus", values: ["v"] }] }
    expect(decode(s)).toEqual(s)
  })

  it("rejects wrongly typed fields", () => {
    expect(() => decode({ matchLabels: { a: 1 } })).toThrow()
    expect(() => decode({ matchExpressions: [{ operator: "In" }] })).toThrow()
    expect(() => decode({ matchExpressions: [{ key: "k", operator: "In", values: "v" }] })).toThrow()
  })

  it("describes every field for kubectl explain", () => {
    const missing: Array<string> = []
    // Fields (properties) need a description; array items of a described field do not.
    const walk = (node: unknown, path: string, isField: boolean): void => {
      if (typeof node !== "object" || node === null) return
      const n = node as { description?: unknown; properties?: Record<string, unknown>; items?: unknown }
      if (isField && (typeof n.description !== "string" || n.description.length === 0)) missing.push(path)
      for (const [k, v] of Object.entries(n.properties ?? {})) walk(v, `${path}.${k}`, true)
      walk(n.items, `${path}[]`, false)
    }
    walk(Schema.toJsonSchemaDocument(LabelSelector).schema, "selector", true)
    expect(missing).toEqual([])
  })

  it("exports the operators and a guard", () => {
    expect(labelSelectorOperators).toEqual(["In", "NotIn", "Exists", "DoesNotExist"])
    expect(isLabelSelectorOperator("In")).toBe(true)
    expect(isLabelSelectorOperator("in")).toBe(false)
  })
})

describe("validateLabelSelector", () => {
  it.each<[string, LabelSelector]>([
    ["empty", {}],
    ["empty parts", { matchLabels: {}, matchExpressions: [] }],
    ["labels", { matchLabels: { "kubernetes.io/hostname": "node-1", tier: "", "a.b/C_d": "x.Y-z" } }],
    [
      "every operator",
      {
        matchExpressions: [
          { key: "a", operator: "In", values: ["x", "y"] },
          { key: "b", operator: "NotIn", values: ["x"] },
          { key: "c", operator: "Exists" },
          { key: "d", operator: "DoesNotExist", values: [] },
          { key: "e", operator: "In", values: [""] }
        ]
      }
    ]
  ])("accepts %s", (_, selector) => {
    expect(validateLabelSelector(selector)).toEqual([])
  })

  it.each<[string, LabelSelector, ReadonlyArray<string>]>([
    ["In without values", { matchExpressions: [{ key: "a", operator: "In" }] }, [`matchExpressions[0].values: ${requiredValues}`]],
    [
      "NotIn with empty values",
      { matchExpressions: [{ key: "a", operator: "NotIn", values: [] }] },
      [`matchExpressions[0].values: ${requiredValues}`]
    ],
    [
      "Exists with values",
      { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
      [`matchExpressions[0].values: ${forbiddenValues}`]
    ],
    [
      "DoesNotExist with values",
      { matchExpressions: [{ key: "a", operator: "DoesNotExist", values: ["x"] }] },
      [`matchExpressions[0].values: ${forbiddenValues}`]
    ],
    [
      "unknown operator",
      { matchExpressions: [{ key: "a", operator: "in", values: ["x"] }] },
      ['matchExpressions[0].operator: Unsupported value: "in": supported values: "In", "NotIn", "Exists", "DoesNotExist"']
    ],
    [
      "bad expression key",
      { matchExpressions: [{ key: "-a", operator: "Exists" }] },
      [`matchExpressions[0].key: Invalid value: "-a": ${nameRegexMsg}`]
    ],
    [
      "bad expression value",
      {
        matchExpressions: [
          { key: "a", operator: "Exists" },
          { key: "b", operator: "In", values: ["ok", "a b"] }
        ]
      },
      [`matchExpressions[1].values[1]: Invalid value: "a b": ${labelValueRegexMsg}`]
    ],
    [
      "bad matchLabels key",
      { matchLabels: { "a/b/c/": "x" } },
      [
        "matchLabels: Invalid value: \"a/b/c/\": a qualified name must consist of alphanumeric characters, '-', '_' " +
          "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " +
          "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional " +
          "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
      ]
    ],
    [
      "bad matchLabels value",
      { matchLabels: { a: "x".repeat(64) } },
      [`matchLabels: Invalid value: "${"x".repeat(64)}": must be no more than 63 characters`]
    ],
    [
      "Go-quoted values",
      { matchLabels: { 'a"\n': "b\\\u0001" } },
      [`matchLabels: Invalid value: "a\\"\\n": ${nameRegexMsg}`, `matchLabels: Invalid value: "b\\\\\\x01": ${labelValueRegexMsg}`]
    ],
    [
      "several problems, labels sorted by key then expressions in order",
      {
        matchLabels: { z: "-", "": "ok" },
        matchExpressions: [{ key: "", operator: "Bogus", values: ["-"] }]
      },
      [
        'matchLabels: Invalid value: "": name part must be non-empty',
        `matchLabels: Invalid value: "": ${nameRegexMsg}`,
        `matchLabels: Invalid value: "-": ${labelValueRegexMsg}`,
        'matchExpressions[0].operator: Unsupported value: "Bogus": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
        'matchExpressions[0].key: Invalid value: "": name part must be non-empty',
        `matchExpressions[0].key: Invalid value: "": ${nameRegexMsg}`,
        `matchExpressions[0].values[0]: Invalid value: "-": ${labelValueRegexMsg}`
      ]
    ]
  ])("rejects %s", (_, selector, expected) => {
    expect(validateLabelSelector(selector)).toEqual(expected)
  })
})

describe("matchesLabelSelector", () => {
  const labels = { app: "web", tier: "frontend", empty: "" }
  const expr = (key: string, operator: string, values?: ReadonlyArray<string>): LabelSelector => ({
    matchExpressions: [values === undefined ? { key, operator } : { key, operator, values }]
  })

  it.each<[string, LabelSelector, Record<string, string>, boolean]>([
    ["{} matches anything", {}, labels, true],
    ["{} matches no labels", {}, {}, true],
    ["empty parts match anything", { matchLabels: {}, matchExpressions: [] }, labels, true],
    ["matchLabels equal", { matchLabels: { app: "web" } }, labels, true],
    ["matchLabels all must hold", { matchLabels: { app: "web", tier: "backend" } }, labels, false],
    ["matchLabels missing key", { matchLabels: { zone: "a" } }, labels, false],
    ["matchLabels empty value needs the key", { matchLabels: { zone: "" } }, labels, false],
    ["matchLabels empty value present", { matchLabels: { empty: "" } }, labels, true],
    ["In, value in set", expr("app", "In", ["db", "web"]), labels, true],
    ["In, value not in set", expr("app", "In", ["db"]), labels, false],
    ["In, key absent", expr("zone", "In", ["a"]), labels, false],
    ["NotIn, value in set", expr("app", "NotIn", ["web"]), labels, false],
    ["NotIn, value not in set", expr("app", "NotIn", ["db"]), labels, true],
    ["NotIn, key absent", expr("zone", "NotIn", ["a"]), labels, true],
    ["Exists, present", expr("app", "Exists"), labels, true],
    ["Exists, present with empty value", expr("empty", "Exists"), labels, true],
    ["Exists, absent", expr("zone", "Exists"), labels, false],
    ["DoesNotExist, present", expr("app", "DoesNotExist"), labels, false],
    ["DoesNotExist, absent", expr("zone", "DoesNotExist"), labels, true],
    ["prototype keys are not labels (Exists)", expr("constructor", "Exists"), {}, false],
    ["prototype keys are not labels (DoesNotExist)", expr("toString", "DoesNotExist"), {}, true],
    [
      "labels AND expressions, both hold",
      { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["frontend"] }] },
      labels,
      true
    ],
    [
      "labels AND expressions, expression fails",
      { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] },
      labels,
      false
    ],
    [
      "labels AND expressions, label fails",
      { matchLabels: { app: "db" }, matchExpressions: [{ key: "tier", operator: "Exists" }] },
      labels,
      false
    ],
    // Invalid requirements match nothing rather than everything.
    ["invalid: unknown operator", expr("app", "Bogus", ["web"]), labels, false],
    ["invalid: In without values", expr("app", "In"), labels, false],
    ["invalid: NotIn without values", expr("zone", "NotIn", []), labels, false],
    ["invalid: Exists with values", expr("app", "Exists", ["web"]), labels, false],
    ["invalid: DoesNotExist with values", expr("zone", "DoesNotExist", ["x"]), labels, false]
  ])("%s", (_, selector, l, expected) => {
    expect(matchesLabelSelector(selector, l)).toBe(expected)
  })
})

describe("formatLabelSelector", () => {
  it.each<[string, LabelSelector, string]>([
    ["empty", {}, ""],
    ["empty parts", { matchLabels: {}, matchExpressions: [] }, ""],
    [
      "the documented example, sorted by key",
      {
        matchLabels: { a: "b" },
        matchExpressions: [
          { key: "e", operator: "Exists" },
          { key: "d", operator: "DoesNotExist" },
          { key: "c", operator: "In", values: ["y", "x"] }
        ]
      },
      "a=b,c in (x,y),!d,e"
    ],
    [
      "notin and empty label value",
      {
        matchLabels: { "kubernetes.io/os": "linux", blank: "" },
        matchExpressions: [{ key: "zone", operator: "NotIn", values: ["b", "a"] }]
      },
      "blank=,kubernetes.io/os=linux,zone notin (a,b)"
    ],
    [
      "same key twice keeps both",
      {
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "app", operator: "Exists" }]
      },
      "app,app=web"
    ],
    [
      "unknown operator is kept, not dropped",
      {
        matchExpressions: [{ key: "app", operator: "Bogus", values: ["x"] }]
      },
      "app Bogus (x)"
    ]
  ])("%s", (_, selector, expected) => {
    expect(formatLabelSelector(selector)).toBe(expected)
  })
})

describe("properties", () => {
  const labelName = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$/)
  const prefix = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?){0,2}$/)
  const labelKey = fc.oneof(
    labelName,
    fc.tuple(prefix, labelName).map(([p, n]) => `${p}/${n}`)
  )
  const labelValue = fc.oneof(fc.constant(""), labelName)
  // Small alphabets so that generated selectors and labels actually share keys and values.
  const sharedKey = fc.oneof(labelKey, fc.constantFrom("app", "tier", "zone"))
  const sharedValue = fc.oneof(labelValue, fc.constantFrom("a", "b", "c"))
  const labelsArb = fc.dictionary(sharedKey, sharedValue, { maxKeys: 6 })
  const validRequirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
    fc.record({
      key: sharedKey,
      operator: fc.constantFrom("In", "NotIn"),
      values: fc.array(sharedValue, { minLength: 1, maxLength: 4 })
    }),
    fc.record({ key: sharedKey, operator: fc.constantFrom("Exists", "DoesNotExist") })
  )
  const validSelector: fc.Arbitrary<LabelSelector> = fc.record(
    { matchLabels: labelsArb, matchExpressions: fc.array(validRequirement, { maxLength: 4 }) },
    { requiredKeys: [] }
  )

  it("generated selectors are valid", () => {
    fc.assert(
      fc.property(validSelector, (s) => {
        expect(validateLabelSelector(s)).toEqual([])
      })
    )
  })

  it("(a) matchLabels L matches any superset of L", () => {
    fc.assert(
      fc.property(labelsArb, labelsArb, (l, extra) => {
        expect(validateLabelSelector({ matchLabels: l })).toEqual([])
        expect(matchesLabelSelector({ matchLabels: l }, { ...extra, ...l })).toBe(true)
      })
    )
  })

  it("(b) Exists on an absent key never matches", () => {
    fc.assert(
      fc.property(validSelector, labelsArb, sharedKey, (s, l, key) => {
        fc.pre(!Object.hasOwn(l, key))
        const selector = { ...s, matchExpressions: [...(s.matchExpressions ?? []), { key, operator: "Exists" }] }
        expect(matchesLabelSelector(selector, l)).toBe(false)
      })
    )
  })

  it("(c) NotIn is the negation of In for present keys", () => {
    fc.assert(
      fc.property(labelsArb, sharedKey, sharedValue, fc.array(sharedValue, { minLength: 1, maxLength: 4 }), (l, key, value, values) => {
        const present = { ...l, [key]: value }
        const inSel = { matchExpressions: [{ key, operator: "In", values }] }
        const notInSel = { matchExpressions: [{ key, operator: "NotIn", values }] }
        expect(matchesLabelSelector(notInSel, present)).toBe(!matchesLabelSelector(inSel, present))
        expect(matchesLabelSelector(inSel, present)).toBe(values.includes(value))
      })
    )
  })

  it("(d) validation, matching and formatting never throw on arbitrary selectors", () => {
    const anyString = fc.string({ unit: "binary", maxLength: 80 })
    const anySelector: fc.Arbitrary<LabelSelector> = fc.record(
      {
        matchLabels: fc.dictionary(anyString, anyString, { maxKeys: 4 }),
        matchExpressions: fc.array(
          fc.record(
            {
              key: anyString,
              operator: fc.oneof(fc.constantFrom(...labelSelectorOperators), anyString),
              values: fc.array(anyString, { maxLength: 3 })
            },
            { requiredKeys: ["key", "operator"] }
          ),
          { maxLength: 4 }
        )
      },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(anySelector, fc.dictionary(anyString, anyString, { maxKeys: 4 }), (s, l) => {
        expect(validateLabelSelector(s).every((m) => typeof m === "string")).toBe(true)
        expect(typeof matchesLabelSelector(s, l)).toBe("boolean")
        expect(typeof formatLabelSelector(s)).toBe("string")
      }),
      { numRuns: 500 }
    )
  })

  it("formatting ignores the order of expressions and values", () => {
    fc.assert(
      fc.property(validSelector, fc.nat(), (s, seed) => {
        const exprs = [...(s.matchExpressions ?? [])]
        const rotated = exprs
          .map((e, i) => exprs[(i + seed) % exprs.length] ?? e)
          .map((e) => (e.values === undefined ? e : { ...e, values: [...e.values].reverse() }))
        expect(formatLabelSelector({ ...s, matchExpressions: rotated })).toBe(formatLabelSelector(s))
      })
    )
  })
})
