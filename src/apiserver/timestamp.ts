/** RFC 3339 in whole seconds, as metav1.Time serialises. */
export const timestamp = (millis: number): string =>
  new Date(Math.floor(millis / 1000) * 1000).toISOString().replace(".000Z", "Z")
