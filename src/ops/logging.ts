import { Cause, Effect, Formatter, Layer, Logger, Option, Predicate, Redactable, References } from "effect"
import type { LogLevel } from "effect"
import { Flag } from "effect/cli"
import { escapeForeignLines, escapeForeignText, isPrintable, maxForeignCharacters, quoteBounded } from "../api/goQuote.ts"

/** json: one object per line for log collectors (the default in a pod); text: for a person at a terminal. */
export type LogFormat = "json" | "text"

const mask = "<redacted>"

// Keys whose values are credentials wherever they appear: docker config entries (auth,
// identitytoken, registrytoken, password), HTTP headers (authorization), kubeconfig fields (token).
// `pullSecrets` and the like name secrets without holding them, so "secret" alone is not masked.
const secretKey = /passw(or)?d|passphrase|token|credential|auth(orization)?$|dockerconfigjson|dockercfg|private[-_]?key|api[-_]?key/i

/** A Secret, also as a list item (which carries no kind): every value of data/stringData is masked. */
const isSecret = (object: Readonly<Record<string, unknown>>): boolean =>
  object["kind"] === "Secret" ||
  (Predicate.isString(object["type"]) && Predicate.isObject(object["metadata"]) && ("data" in object || "stringData" in object))

const maskValues = (value: unknown): unknown =>
  Predicate.isObject(value) ? Object.fromEntries(Object.keys(value).map((key) => [key, mask])) : mask

const redactFields = (value: Readonly<Record<string, unknown>>, ancestors: Set<object>): Record<string, unknown> => {
  const secret = isSecret(value)
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    out[key] = secretKey.test(key)
      ? mask
      : secret && (key === "data" || key === "stringData")
        ? maskValues(inner)
        : redactIn(inner, ancestors)
  }
  return out
}

const redactIn = (value: unknown, ancestors: Set<object>): unknown => {
  if (!Predicate.isObjectOrArray(value)) return value
  // Dates and Effect's Redacted values keep their own JSON form (Redacted already hides itself).
  if (Predicate.isDate(value) || Redactable.isRedactable(value)) return value
  if (ancestors.has(value)) return "[Circular]"
  ancestors.add(value)
  try {
    if (Array.isArray(value)) return value.map((item) => redactIn(item, ancestors))
    // An error's fields (a tagged error's _tag, kind, name...) are data too, and may hold secrets.
    if (Predicate.isError(value)) return { name: value.name, message: value.message, ...redactFields(value, ancestors) }
    const toJSON = value["toJSON"]
    if (Predicate.isFunction(toJSON) && toJSON.length === 0) return redactIn(toJSON.call(value), ancestors)
    return redactFields(value, ancestors)
  } finally {
    ancestors.delete(value)
  }
}

/**
 * A copy of `value` safe to log: values under credential-like keys (password, token, auth,
 * .dockerconfigjson, .dockercfg, ...) and the data of Secrets are replaced by "<redacted>".
 */
export const redactSecrets = (value: unknown): unknown => redactIn(value, new Set())

// Fields the logger owns; an annotation with one of these names is kept under "annotation.<name>".
const ownFields: ReadonlySet<string> = new Set(["time", "level", "msg", "args", "spans", "error", "cause"])

const isWord = (part: unknown): part is string | number | boolean | bigint =>
  Predicate.isString(part) || Predicate.isNumber(part) || Predicate.isBoolean(part) || Predicate.isBigInt(part)

/**
 * The fields of one log line: time, level, msg (the message's plain words), annotations at the
 * top level, args (the message's structured parts), spans (ms since each log span began), error
 * (the first typed failure's fields, so a tagged error stays machine-readable) and cause (the
 * pretty cause with stack traces).
 */
const logRecord = (options: Logger.Options<unknown>): Record<string, unknown> => {
  const parts: ReadonlyArray<unknown> = Array.isArray(options.message) ? options.message : [options.message]
  const record: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.toLowerCase(),
    msg: parts.filter(isWord).map(String).join(" ")
  }
  for (const [key, value] of Object.entries(options.fiber.getRef(References.CurrentLogAnnotations))) {
    record[ownFields.has(key) ? `annotation.${key}` : key] = secretKey.test(key) ? mask : redactSecrets(value)
  }
  const args = parts.filter((part) => !isWord(part))
  if (args.length > 0) record["args"] = redactSecrets(args)
  const spans = options.fiber.getRef(References.CurrentLogSpans)
  if (spans.length > 0) {
    const now = options.date.getTime()
    record["spans"] = Object.fromEntries(spans.map(([label, start]) => [label, now - start]))
  }
  if (options.cause.reasons.length > 0) {
    const error = Cause.findErrorOption(options.cause)
    if (Option.isSome(error)) record["error"] = redactSecrets(error.value)
    record["cause"] = Cause.pretty(options.cause)
  }
  return record
}

export type LineSink = (line: string) => void

// Logs go to stderr so stdout stays free for command output (crds, version).
const toStderr: LineSink = (line) => {
  process.stderr.write(`${line}\n`)
}

// Log lines carry what users wrote (image references, names, a runtime's words) and are read on
// terminals (`kubectl logs`): nothing in them may act as a control sequence or reorder the text.

/**
 * JSON.stringify escapes C0 controls but leaves DEL, C1 controls, bidi and zero-width characters raw:
 * those are written as \u escapes, which is the same JSON value.
 */
const terminalSafeJson = (json: string): string =>
  json.replace(/[^\x20-\x7e]/gu, (character) =>
    isPrintable(character)
      ? character
      : character
          .split("")
          .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`)
          .join("")
  )

const jsonLogger = (sink: LineSink = toStderr): Logger.Logger<unknown, void> =>
  Logger.make((options) => sink(terminalSafeJson(Formatter.formatJson(logRecord(options)))))

// A value is written bare when it is one short printable ASCII word, else quoted (Go's %q) and bounded.
const textValue = (value: unknown): string => {
  const plain = Predicate.isString(value) ? value : Formatter.formatJson(value)
  return plain.length <= maxForeignCharacters && /^[\x21\x23-\x3c\x3e-\x7e]+$/.test(plain)
    ? plain
    : quoteBounded(plain, maxForeignCharacters)
}

/** `2026-12-01T10:00:00.000Z INFO  msg key=value ...`, then the cause's lines, if any. */
const textLogger = (sink: LineSink = toStderr): Logger.Logger<unknown, void> =>
  Logger.make((options) => {
    // The error's fields are left out: the cause printed below says the same for a reader.
    const { time, level, msg, error, cause, ...fields } = logRecord(options)
    let line = `${String(time)} ${String(level).toUpperCase().padEnd(5)} ${escapeForeignText(String(msg))}`
    for (const [key, value] of Object.entries(fields)) line += ` ${key}=${textValue(value)}`
    // Every line of the cause escaped, none cut: a stack trace is read whole.
    if (cause !== undefined) line += `\n${escapeForeignLines(String(cause))}`
    sink(line)
  })

/**
 * Replaces Effect's default loggers with the chosen format. `level` sets the minimum level; left
 * out, the level already in place applies (the CLI's global `--log-level` flag sets it, so the
 * roles need no flag of their own). The sink defaults to stderr; tests pass their own.
 */
export const loggingLayer = (options: {
  readonly format: LogFormat
  readonly level?: LogLevel.LogLevel
  readonly sink?: LineSink
}): Layer.Layer<never> => {
  const loggers = Logger.layer([options.format === "json" ? jsonLogger(options.sink) : textLogger(options.sink)])
  return options.level === undefined ? loggers : Layer.mergeAll(loggers, Layer.succeed(References.MinimumLogLevel, options.level))
}

/** `--log-format json|text` for `preheat controller` and `preheat daemon`. */
export const logFormatFlag = Flag.Literals("log-format", ["json", "text"]).pipe(
  Flag.withDescription("Log format: json (one object per line) or text. Default: text on a terminal, else json."),
  Flag.withDefault(Effect.sync((): LogFormat => (process.stderr.isTTY ? "text" : "json")))
)
