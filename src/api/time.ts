/** RFC 3339 in whole seconds, as metav1.Time is written on the wire (createdAt, startTime, ...). */
export const rfc3339 = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")
