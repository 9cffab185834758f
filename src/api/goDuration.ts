// Go's time.ParseDuration: the format of durations in kubectl's flags and in cron's "@every".

const unitMillis: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000
}

const term = /^([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/

/**
 * Milliseconds (negative after a "-"), or undefined where Go refuses the text: `90s`, `1.5m`,
 * `.5s`, `1h30m`, `0`, `-0`; every number needs a unit and at least one digit.
 */
export const parseGoDuration = (text: string): number | undefined => {
  const negative = text.startsWith("-")
  let rest = negative || text.startsWith("+") ? text.slice(1) : text
  if (rest === "0") return 0
  if (rest === "") return undefined
  let millis = 0
  while (rest !== "") {
    const match = term.exec(rest)
    const number = match?.[1] ?? ""
    if (match === null || number === "" || number === ".") return undefined
    millis += Number(number) * (unitMillis[match[2] ?? ""] ?? Number.NaN)
    rest = rest.slice(match[0].length)
  }
  if (!Number.isFinite(millis)) return undefined
  return negative ? -millis : millis
}
