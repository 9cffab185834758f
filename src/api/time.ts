/** RFC 3339 in whole seconds, as metav1.Time is written on the wire (createdAt, startTime, ...). */
// toISOString always ends in `.sssZ`: cut rather than matched (the daemon formats one for every progress report).
export const rfc3339 = (millis: number): string => `${new Date(millis).toISOString().slice(0, -5)}Z`

/** A timestamp's milliseconds, or undefined when it is absent or does not parse. */
export const millisOf = (timestamp: string | undefined): number | undefined => {
  if (timestamp === undefined) return undefined
  const value = Date.parse(timestamp)
  return Number.isNaN(value) ? undefined : value
}
