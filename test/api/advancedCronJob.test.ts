// AdvancedCronJob's admission rules (upstream's webhook, the proposal's template rules) as the
// CRD's CEL rules and as the decoder: both refuse the same objects at the same paths in the same
// words; the decoder alone also knows time zones and range order (which no regular rule can).
import fc from "fast-check"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { crdOf, kinds } from "../../src/api/crd/manifests.ts"
import { parseSchedule, scheduleGrammar } from "../../src/api/cronSchedule.ts"
import { decodeAdvancedCronJob } from "../../src/api/decode.ts"
import { notPrintableAscii } from "../../src/api/goQuoteCel.ts"
import { celViolations } from "../../harness/apiserver/admission/celRules.ts"
import { applyDefaults } from "../../harness/apiserver/admission/structuralSchema.ts"
import type { StructuralSchema } from "../../harness/apiserver/admission/structuralSchema.ts"

const schema = crdOf(kinds.find((k) => k.kind === "AdvancedCronJob")!).spec.versions[0]!.schema.openAPIV3Schema as StructuralSchema

const cel = (input: unknown) =>
  celViolations(schema, applyDefaults(schema, input)).map((v) => ({ path: v.path.replace(/^\./, ""), message: v.message }))
const decoder = (input: unknown) => {
  const r = decodeAdvancedCronJob(input)
  return Result.isFailure(r) ? r.failure.errors.map((e) => ({ path: e.path, message: e.message })) : []
}

const template = { imageListPullJobTemplate: { spec: { images: ["nginx:1.25"] } } }
const cron = (spec: Record<string, unknown>, name = "warm") => ({ metadata: { name }, spec: { schedule: "0 2 * * *", template, ...spec } })

const help =
  "expected 5 fields (minute hour day-of-month month day-of-week), @yearly, @annually, @monthly, @weekly, " +
  "@daily, @midnight, @hourly or @every <duration>, optionally after CRON_TZ=<zone> or TZ=<zone>"

describe("AdvancedCronJob schedules: the CRD rule and the decoder", () => {
  it.each([
    "0 2 * * *",
    "*/1 * * * *",
    "* * * * *",
    "0,15,30,45 9-17 * * mon-FRI",
    "5/10 * ? * *",
    "0 0 1 jan,Jul *",
    "00 02 01 01 0",
    "@hourly",
    "@daily",
    "@midnight",
    "@weekly",
    "@monthly",
    "@yearly",
    "@annually",
    "@every 1h30m",
    "@every 90s",
    "@every 1.5h",
    "CRON_TZ=Europe/Berlin 0 9 * * *",
    "TZ=UTC */5 * * * *",
    "  0 2 * * *  ",
    "0\t2 * * *",
    "1-5/2 * * * *"
  ])("%j is accepted by both", (schedule) => {
    expect(cel(cron({ schedule }))).toEqual([])
    expect(decoder(cron({ schedule }))).toEqual([])
  })

  it.each([
    "0 2 * *",
    "0 2 * * * *",
    "60 * * * *",
    "* 24 * * *",
    "* * 0 * *",
    "* * 32 * *",
    "* * * 13 *",
    "* * * * 7",
    "*/0 * * * *",
    "@reboot",
    "@every",
    "@every 5",
    "@every 1d",
    "0 2 L * *",
    "0 2 * * MON#1",
    "0 2 * * 1W",
    "@Hourly",
    "not a schedule",
    "TZ=UTC",
    "0 0 * * 5-",
    "0 0 * * ,1"
  ])("%j is refused by both, in the same words", (schedule) => {
    const expected = [{ path: "spec.schedule", message: `invalid schedule ${JSON.stringify(schedule)}: ${help}` }]
    expect(cel(cron({ schedule }))).toEqual(expected)
    expect(decoder(cron({ schedule }))).toEqual(expected)
  })

  it("a schedule with a terminal title escape: escaped by the decoder, left out by the CRD rule", () => {
    const schedule = "\x1b]0;pwned\x07 * * * *"
    expect(decoder(cron({ schedule }))).toEqual([
      { path: "spec.schedule", message: `invalid schedule "\\x1b]0;pwned\\a * * * *": ${help}` }
    ])
    expect(cel(cron({ schedule }))).toEqual([{ path: "spec.schedule", message: `invalid schedule ${notPrintableAscii}: ${help}` }])
  })

  it.each(["", "   "])("%j: upstream's empty-schedule message from both", (schedule) => {
    const expected = [{ path: "spec.schedule", message: "schedule cannot be empty, please provide valid cron schedule." }]
    expect(cel(cron({ schedule }))).toEqual(expected)
    expect(decoder(cron({ schedule }))).toEqual(expected)
  })

  it("the decoder alone: a range that runs backwards, an unknown time zone", () => {
    expect(cel(cron({ schedule: "0 5-3 * * *" }))).toEqual([])
    expect(decoder(cron({ schedule: "0 5-3 * * *" }))).toEqual([
      { path: "spec.schedule", message: `invalid schedule "0 5-3 * * *": From value is larger than to value: '5-3'` }
    ])
    expect(decoder(cron({ schedule: "CRON_TZ=Mars/Olympus 0 2 * * *" }))).toEqual([
      { path: "spec.schedule", message: 'invalid schedule "CRON_TZ=Mars/Olympus 0 2 * * *": unknown time zone "Mars/Olympus"' }
    ])
    expect(decoder(cron({ timeZone: "Mars/Olympus" }))).toEqual([{ path: "spec.timeZone", message: 'unknown time zone "Mars/Olympus"' }])
    expect(Result.isSuccess(parseSchedule("0 2 * * *", "Asia/Kolkata"))).toBe(true)
  })
})

describe("generated schedules over the five fields' alphabet", () => {
  const value = (min: number, max: number, names: ReadonlyArray<string>) =>
    names.length === 0
      ? fc.integer({ min: min - 1, max: max + 1 }).map(String)
      : fc.oneof(fc.integer({ min: min - 1, max: max + 1 }).map(String), fc.constantFrom(...names, ...names.map((n) => n.toUpperCase())))
  const item = (v: fc.Arbitrary<string>) =>
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom("*", "?"),
          v,
          fc.tuple(v, v).map(([a, b]) => `${a}-${b}`)
        ),
        fc.option(fc.integer({ min: 0, max: 70 }))
      )
      .map(([range, step]) => (step === null ? range : `${range}/${step}`))
  const field = (v: fc.Arbitrary<string>) => fc.array(item(v), { minLength: 1, maxLength: 3 }).map((items) => items.join(","))
  const schedule = fc
    .tuple(
      field(value(0, 59, [])),
      field(value(0, 23, [])),
      field(value(1, 31, [])),
      field(value(1, 12, ["jan", "jul", "dec"])),
      field(value(0, 6, ["sun", "wed", "sat"]))
    )
    .map((fields) => fields.join(" "))

  it("the CRD rule and the decoder refuse the same ones; the decoder alone only backward ranges", () => {
    fc.assert(
      fc.property(schedule, (text) => {
        const celRefusal = cel(cron({ schedule: text })).find((e) => e.path === "spec.schedule")
        const decoderRefusal = decoder(cron({ schedule: text })).find((e) => e.path === "spec.schedule")
        if (celRefusal !== undefined) expect(decoderRefusal).toEqual(celRefusal)
        else if (decoderRefusal !== undefined) expect(decoderRefusal.message).toMatch(/From value is larger than to value/)
      }),
      { numRuns: 2000 }
    )
  })

  it("a step beyond the field's range is robfig's: only the start (croner alone would refuse it)", () => {
    expect(new RegExp(scheduleGrammar).test("*/70 * * * *")).toBe(true)
    const hourly = parseSchedule("*/70 * * * *")
    const at = Date.parse("2026-12-01T12:00:30Z")
    expect(Result.isSuccess(hourly) && hourly.success.next(at)).toBe(Date.parse("2026-12-01T13:00:00Z"))
    const fifth = parseSchedule("5/70 * * * *")
    expect(Result.isSuccess(fifth) && fifth.success.next(at)).toBe(Date.parse("2026-12-01T12:05:00Z"))
  })
})

describe("AdvancedCronJob fields: the CRD rules and the decoder agree", () => {
  const other = { jobTemplate: { spec: {} } }
  const withList = (spec: Record<string, unknown>) => cron({ template: { imageListPullJobTemplate: { spec: { images: ["a"], ...spec } } } })
  it.each([
    [
      "no template",
      cron({ template: {} }),
      "spec.template",
      "spec must have one template, either JobTemplate, BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
    ],
    [
      "two templates",
      cron({ template: { ...template, ...other } }),
      "spec.template",
      "spec can have only one template, either JobTemplate, BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
    ],
    [
      "timeZone and TZ=",
      cron({ schedule: "TZ=UTC 0 2 * * *", timeZone: "UTC" }),
      "spec.schedule",
      "cannot use both timeZone field and TZ or CRON_TZ in schedule"
    ],
    ["empty timeZone", cron({ timeZone: "" }), "spec.timeZone", "timeZone must be nil or non-empty string"],
    [
      "Local",
      cron({ timeZone: "local" }),
      "spec.timeZone",
      "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
    ],
    [
      "Never template",
      withList({ completionPolicy: { type: "Never" } }),
      "spec.template.imageListPullJobTemplate.spec.completionPolicy.type",
      'completionPolicy only support Always, current: "Never"'
    ],
    [
      "deadline",
      withList({ completionPolicy: { activeDeadlineSeconds: 14401 } }),
      "spec.template.imageListPullJobTemplate.spec.completionPolicy.activeDeadlineSeconds",
      "activeDeadlineSeconds must be no more than 14400, current: 14401"
    ],
    [
      "ttl",
      withList({ completionPolicy: { ttlSecondsAfterFinished: 86401 } }),
      "spec.template.imageListPullJobTemplate.spec.completionPolicy.ttlSecondsAfterFinished",
      "ttlSecondsAfterFinished must be no more than 86400, current: 86401"
    ],
    [
      "bad image in the template",
      cron({ template: { imageListPullJobTemplate: { spec: { images: ["Nginx:1"] } } } }),
      "spec.template.imageListPullJobTemplate.spec.images[0]",
      'invalid image "Nginx:1": repository name must be lowercase'
    ],
    [
      "name with a dot",
      cron({}, "warm.up"),
      "metadata.name",
      "AdvancedCronJob name must consist of alphanumeric characters or '-' " +
        "(e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')"
    ],
    ["long name", cron({}, "a".repeat(64)), "metadata.name", "must be no more than 63 characters"]
  ])("%s", (_, input, path, message) => {
    expect(cel(input)).toContainEqual({ path, message })
    expect(decoder(input)).toContainEqual({ path, message })
  })

  it("upstream's defaults from the API server and the decoder: Allow, not paused, 3 and 1", () => {
    const r = decodeAdvancedCronJob(cron({}))
    if (Result.isFailure(r)) throw new Error(r.failure.message)
    const expected = { concurrencyPolicy: "Allow", paused: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 }
    expect(r.success.spec).toMatchObject(expected)
    expect((applyDefaults(schema, cron({})) as { spec: unknown }).spec).toMatchObject(expected)
  })

  it("a Job or BroadcastJob template is a valid object (preheat reports it, never runs it)", () => {
    for (const t of [{ jobTemplate: { spec: { template: {} } } }, { broadcastJobTemplate: { spec: { template: {} } } }]) {
      expect(cel(cron({ template: t }))).toEqual([])
      expect(decoder(cron({ template: t }))).toEqual([])
    }
  })

  it("an unknown concurrencyPolicy and negative limits are refused by the schema", () => {
    const r = decoder(cron({ concurrencyPolicy: "Sometimes", startingDeadlineSeconds: -1, failedJobsHistoryLimit: -1 }))
    expect(r.map((e) => e.path).sort()).toEqual(["spec.concurrencyPolicy", "spec.failedJobsHistoryLimit", "spec.startingDeadlineSeconds"])
    const spec = schema.properties!["spec"]!.properties!
    expect(spec["concurrencyPolicy"]!.enum).toEqual(["Allow", "Forbid", "Replace"])
    expect([spec["startingDeadlineSeconds"]!.minimum, spec["successfulJobsHistoryLimit"]!.minimum]).toEqual([0, 0])
  })
})
