// Error messages end up in logs, events and object conditions: credentials must never reach them,
// whatever a proxy, a library or a server echoes back.
const credentials = /\b(Bearer|Basic)\s+[^\s"',;]+/gi

/** `text` with anything shaped like an Authorization header value replaced. */
export const redact = (text: string): string => text.replace(credentials, "$1 [redacted]")
