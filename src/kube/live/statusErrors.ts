// kube-apiserver answers a failed request with an HTTP code and a meta/v1 Status body; this maps
// both to the typed errors of KubeApi, so that callers decide retries by type.
import { Option, Schema } from "effect"
import { AlreadyExists, Conflict, failedTestPath, Forbidden, Gone, Invalid, NotFound, Unavailable } from "../errors.ts"
import type { KubeError } from "../errors.ts"
import type { Resource } from "../resources.ts"
import { redact } from "./redact.ts"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"

/** What a request was about, for messages a user can act on. */
export interface RequestTarget {
  readonly verb: Verb
  readonly resource: Resource
  readonly name: string
  readonly namespace?: string | undefined
}

const StatusCause = Schema.Struct({
  field: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String)
})

/** The fields of meta/v1 Status this client reads; everything else is ignored. */
const Status = Schema.Struct({
  message: Schema.optionalKey(Schema.String),
  reason: Schema.optionalKey(Schema.String),
  code: Schema.optionalKey(Schema.Number),
  details: Schema.optionalKey(Schema.Struct({ causes: Schema.optionalKey(Schema.Array(StatusCause)) }))
})
export type Status = typeof Status.Type

const decodeStatus = Schema.decodeUnknownOption(Status)

/** The Status in a response body (or an ERROR watch event); empty when the body is something else. */
export const statusOf = (body: unknown): Status => Option.getOrElse(decodeStatus(body), () => ({}))

const writeVerbs: ReadonlySet<Verb> = new Set(["create", "update", "patch"])

const describe = (request: RequestTarget): string => {
  const name = request.name === "" ? "" : ` ${request.namespace === undefined ? "" : `${request.namespace}/`}${request.name}`
  return `${request.verb} ${request.resource.kind}${name}`
}

/** The error of an HTTP answer with this code and body. */
export const kubeErrorOf = (code: number, body: unknown, request: RequestTarget): KubeError => {
  const status = statusOf(body)
  const message = redact(status.message ?? `HTTP ${code}`)
  const target = {
    kind: request.resource.kind,
    objectName: request.name,
    ...(request.namespace === undefined ? {} : { namespace: request.namespace })
  }
  const invalid = (causes: ReadonlyArray<{ readonly field: string; readonly message: string }>) =>
    new Invalid({ ...target, causes: causes.length > 0 ? causes : [{ field: "", message }] })

  if (code === 401 || code === 403) return new Forbidden({ ...target, verb: request.verb, message })
  // Creating in a namespace that does not exist is a 404 too; create has no NotFound: the object is invalid there.
  if (code === 404) {
    return request.verb === "create" ? invalid([{ field: "metadata.namespace", message }]) : new NotFound(target)
  }
  if (code === 409) return request.verb === "create" ? new AlreadyExists(target) : new Conflict({ ...target, message })
  if (code === 410) return new Gone({ kind: request.resource.kind, message })
  // 400 and 415 on a write: the server could not take the body as sent, as 422 it could not accept it.
  const failedTest = (status.details?.causes ?? []).find((cause) => failedTestPath(cause.message ?? "") !== undefined)
  if (code === 422 && failedTest !== undefined) return new Conflict({ ...target, message: redact(failedTest.message ?? message) })
  if (code === 422 || (writeVerbs.has(request.verb) && (code === 400 || code === 415))) {
    return invalid(
      (status.details?.causes ?? []).map((cause) => ({
        field: cause.field ?? "",
        message: redact(cause.message ?? cause.reason ?? "")
      }))
    )
  }
  return new Unavailable({ message: `${describe(request)}: HTTP ${code}: ${message}` })
}

/** A transport failure (refused, reset, timed out) as Unavailable, naming the request but never its headers. */
export const unavailableOf = (request: RequestTarget, reason: string): Unavailable =>
  new Unavailable({ message: `${describe(request)}: ${redact(reason)}` })

/**
 * `error` if the verb can fail that way, else Unavailable: a code the verb should never get (a 409
 * on a get) says the server or something between is misbehaving, which a retry may outlast.
 */
export const narrowTo =
  <const Tags extends KubeError["_tag"]>(allowed: ReadonlyArray<Tags>) =>
  (error: KubeError, request: RequestTarget): Extract<KubeError, { readonly _tag: Tags }> | Unavailable =>
    error._tag === "Unavailable" || (allowed as ReadonlyArray<string>).includes(error._tag)
      ? (error as Extract<KubeError, { readonly _tag: Tags }> | Unavailable)
      : unavailableOf(request, `unexpected ${error._tag}: ${"message" in error ? error.message : ""}`)

/** What went wrong below HTTP, from fetch's error and its cause (`fetch failed: connect ECONNREFUSED ...`). */
export const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause: unknown = error.cause
  const detail = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : ""
  const reason = detail === "" || detail === error.message ? error.message : `${error.message}: ${detail}`
  return reason.split("\n")[0] ?? reason
}
