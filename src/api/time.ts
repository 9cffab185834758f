/** RFC 3339 in whole seconds, as metav1.Time is written on the wire (createdAt, startTime, ...). */
export const rfc3339 = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** A timestamp's milliseconds, or undefined when it is absent or does not parse. */
export const millisOf = (timestamp: string | undefined): number | undefined => {
  if (timestamp === undefined) return undefined
  const value = Date.parse(timestamp)
  return Number.isNaN(value) ? undefined : value
}
