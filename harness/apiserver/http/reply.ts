// What a handler answers, as data: a body, or a stream of watch events. server.ts writes it.
import type { EncodedJson } from "./encodedJson.ts"
import type { Stream } from "effect"
import { stringify } from "yaml"
import type { ApiFailure } from "./apiStatus.ts"
import { statusBody } from "./apiStatus.ts"
import type { Encoding } from "./negotiation.ts"

export type Reply =
  | {
      readonly _tag: "Body"
      readonly status: number
      readonly contentType: string
      readonly body: string
      readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
    }
  | {
      readonly _tag: "Stream"
      readonly contentType: string
      /** One encoded event each, newline-terminated; ends when the watch ends. */
      readonly events: Stream.Stream<string>
    }

/** `Warning: 299 - "..."` headers, as kube-apiserver sends for dropped unknown fields. */
const warningHeaders = (warnings: ReadonlyArray<string>) =>
  warnings.length === 0 ? {} : { warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) }

export const jsonReply = (
  status: number,
  value: unknown,
  options: {
    readonly encoding?: Encoding
    readonly contentType?: string
    readonly warnings?: ReadonlyArray<string>
    readonly headers?: Readonly<Record<string, string>>
    /** Where a stored version's text is made once (objectReply); else it is made here. */
    readonly json?: EncodedJson
  } = {}
): Reply =>
  options.encoding === "yaml"
    ? {
        _tag: "Body",
        status,
        contentType: "application/yaml",
        body: stringify(value),
        headers: { ...warningHeaders(options.warnings ?? []), ...options.headers }
      }
    : {
        _tag: "Body",
        status,
        contentType: options.contentType ?? "application/json",
        body: options.json === undefined ? JSON.stringify(value) : options.json.of(value),
        headers: { ...warningHeaders(options.warnings ?? []), ...options.headers }
      }

export const failureReply = (failure: ApiFailure): Reply => jsonReply(failure.code, statusBody(failure))

export const textReply = (status: number, body: string): Reply => ({
  _tag: "Body",
  status,
  contentType: "text/plain; charset=utf-8",
  body,
  headers: {}
})
