/**
 * AdvancedCronJob schedules as upstream accepts them (robfig/cron v3's ParseStandard): five
 * fields (minute hour day-of-month month day-of-week, with `*`, `?`, lists, ranges, steps and
 * month and weekday names), the descriptors `@yearly` ... `@hourly` and `@every <duration>`,
 * optionally after `CRON_TZ=<zone> ` or `TZ=<zone> `. The grammar is a regular expression (in RE2
 * syntax that JavaScript reads the same way), so the CRD's rule and the decoder refuse the same
 * strings in the same words; times are computed by croner, in the schedule's time zone.
 */
import { Cron } from "croner"
import { Result } from "effect"
import { parseGoDuration } from "./goDuration.ts"
import { quoteBounded } from "./goQuote.ts"

/** Case-insensitive letters without inline flags, which JavaScript before ES2025 cannot read. */
const anyCase = (word: string): string => [...word].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join("")
const names = (list: ReadonlyArray<string>): string => list.map(anyCase).join("|")

// Each field's numbers within its bounds (leading zeros allowed, as strconv.Atoi reads them).
const minute = "0*[1-5]?[0-9]"
const hour = "0*(?:1?[0-9]|2[0-3])"
const dayOfMonth = "0*(?:[1-9]|[12][0-9]|3[01])"
const month = `0*(?:[1-9]|1[0-2])|${names(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}`
const dayOfWeek = `0*[0-6]|${names(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}`

const field = (value: string): string => {
  const item = `(?:[*?]|(?:${value})(?:-(?:${value}))?)(?:/0*[1-9][0-9]*)?`
  return `${item}(?:,${item})*`
}

const fields = [minute, hour, dayOfMonth, month, dayOfWeek].map(field).join("\\s+")
const descriptors = "@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)"
// Go's time.ParseDuration: signed decimals with units, or a bare 0.
const goDuration = "[-+]?(?:0|(?:(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)"
const zonePrefix = "(?:(?:CRON_TZ|TZ)=[^ ]* +)?"

/** The whole schedule, surrounding blanks allowed (ParseStandard trims them). */
export const scheduleGrammar = `^\\s*${zonePrefix}(?:${descriptors}|@every ${goDuration}|${fields})\\s*$`

export const scheduleHelp =
  "expected 5 fields (minute hour day-of-month month day-of-week), " +
  "@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>, " +
  "optionally after CRON_TZ=<zone> or TZ=<zone>"

export const emptyScheduleMessage = "schedule cannot be empty, please provide valid cron schedule."
const invalidScheduleMessage = (schedule: string): string => `invalid schedule ${quoteBounded(schedule)}: ${scheduleHelp}`

/** When the runs of a schedule fall: the first run strictly after `after` (ms), or none ever. */
export interface CronSchedule {
  readonly next: (after: number) => number | undefined
}

const descriptorPatterns: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
}

/**
 * robfig's ConstantDelaySchedule: the delay in whole seconds (at least one), counted from the
 * given time truncated to its second.
 */
const every = (delayMs: number): CronSchedule => {
  const delay = Math.max(1000, Math.floor(delayMs / 1000) * 1000)
  return { next: (after) => Math.floor(after / 1000) * 1000 + delay }
}

/** Whether the runtime knows the zone (Go's LoadLocation; "" and "UTC" are UTC there). */
export const isKnownTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

const grammar = new RegExp(scheduleGrammar)

/** Each field's [min, max], in the order of the five fields. */
const fieldBounds: ReadonlyArray<readonly [number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6]
]

/**
 * A field as croner reads what robfig means: `?` is a wildcard (croner would read it as "now"),
 * and a step beyond the field's largest value (robfig: only the range's start; croner refuses
 * it) becomes just that start.
 */
const forCroner = (field: string, [min, max]: readonly [number, number]): string =>
  field
    .replaceAll("?", "*")
    .split(",")
    .map((item) => {
      const [range = "", step] = item.split("/")
      if (step === undefined || Number(step) <= max) return item
      const start = range.split("-")[0]!
      return start === "*" ? String(min) : start
    })
    .join(",")

/**
 * A schedule and its time zone as upstream's controller reads them (formatSchedule): a zone in
 * the schedule wins, else spec.timeZone, else UTC (the controller's local time in a container).
 * The failure is the message for the user.
 */
export const parseSchedule = (schedule: string, timeZone?: string): Result.Result<CronSchedule, string> => {
  if (schedule.trim() === "") return Result.fail(emptyScheduleMessage)
  if (!grammar.test(schedule)) return Result.fail(invalidScheduleMessage(schedule))
  let spec = schedule.trim()
  let zone = timeZone
  const prefix = /^(?:CRON_TZ|TZ)=([^ ]*) +/.exec(spec)
  if (prefix !== null) {
    zone = prefix[1]
    spec = spec.slice(prefix[0].length).trim()
  }
  zone = zone === undefined || zone === "" || zone === "Local" ? "UTC" : zone
  if (!isKnownTimeZone(zone)) return Result.fail(`invalid schedule ${quoteBounded(schedule)}: unknown time zone ${quoteBounded(zone)}`)
  if (spec.startsWith("@every ")) {
    const delay = parseGoDuration(spec.slice("@every ".length))
    return delay === undefined ? Result.fail(invalidScheduleMessage(schedule)) : Result.succeed(every(delay))
  }
  const pattern =
    descriptorPatterns[spec] ??
    spec
      .split(/\s+/)
      .map((f, i) => forCroner(f, fieldBounds[i]!))
      .join(" ")
  try {
    const cron = new Cron(pattern, { timezone: zone, mode: "5-part", sloppyRanges: true, paused: true })
    return Result.succeed({ next: (after) => cron.nextRun(new Date(after))?.getTime() })
  } catch (error) {
    const reason = (error as Error).message.replace(/^CronPattern: /, "")
    return Result.fail(`invalid schedule ${quoteBounded(schedule)}: ${reason}`)
  }
}
