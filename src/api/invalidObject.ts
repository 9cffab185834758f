import { Schema } from "effect"
import { quoteBounded } from "./goQuote.ts"

export const FieldError = Schema.Struct({ path: Schema.String, message: Schema.String })
export type FieldError = typeof FieldError.Type

/** Every problem of one object, each with its field path, so a user fixes them in one go. */
export class InvalidObject extends Schema.TaggedError<InvalidObject>()("InvalidObject", {
  kind: Schema.String,
  name: Schema.String,
  errors: Schema.Array(FieldError)
}) {
  override get message(): string {
    return `${this.kind} ${quoteBounded(this.name)} is invalid: ${formatFieldErrors(this.errors)}`
  }
}

export const formatFieldErrors = (errors: ReadonlyArray<FieldError>): string =>
  errors.map((e) => (e.path === "" ? e.message : `${e.path}: ${e.message}`)).join("; ")

/** `spec.images["nginx"].tags[0]`: the field-path form kubectl users see from the API server; a key that is no identifier quoted (goQuote.ts). */
export const fieldPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments.reduce<string>((path, segment) => {
    if (typeof segment === "number") return `${path}[${segment}]`
    const key = String(segment)
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return path === "" ? key : `${path}.${key}`
    return `${path}[${quoteBounded(key)}]`
  }, "")
