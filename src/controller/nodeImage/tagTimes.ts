/** Parses an RFC 3339 time to epoch milliseconds (Date.parse), as the NodeImage decision reads tag times. */
export type ParseTime = (time: string) => number

/**
 * Date.parse, remembered for the controller that owns it: every NodeImage is decided again on
 * each outcome, and its tags' times repeat across tags and nodes (a wave of tags is written and
 * finishes within the same seconds). Bounded: the memo starts afresh past `limit` times.
 */
export const rememberedTimes = (limit = 4096): ParseTime => {
  const parsed = new Map<string, number>()
  return (time) => {
    let millis = parsed.get(time)
    if (millis === undefined) {
      if (parsed.size >= limit) parsed.clear()
      parsed.set(time, (millis = Date.parse(time)))
    }
    return millis
  }
}
