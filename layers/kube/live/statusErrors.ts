// kube-apiserver answers a failed request with an HTTP code and a meta/v1 Status body; this maps
// both to the typed errors of KubeApi, so that callers decide retries by type.
import { Option, Schema } from "effect"
import {
  AlreadyExists,
  Conflict,
  failedTestPath,
  Forbidden,
  Gone,
  Invalid,
  NotFound,
  Unauthorized,
  Unavailable
} from "../../../src/kube/errors.ts"
import type { ConnectionProblem, KubeError } from "../../../src/kube/errors.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { ExecPluginError } from "./execCredentials/runPlugin.ts"
import { TokenFileError } from "./tokenFile.ts"
import { redact } from "./redact.ts"
import { explainTls, tlsProblemOf } from "./tlsErrors.ts"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"

/** What a request was about, for messages a user can act on. */
export interface RequestTarget {
  readonly verb: Verb
  readonly resource: Resource
  readonly name: string
  readonly namespace?: string | undefined
  /** A write to the status subresource, which RBAC grants apart from the object. */
  readonly subresource?: "status" | undefined
}

/** The RBAC rule a request needs: what a 403 tells the operator to grant. */
export interface RbacRule {
  readonly verb: Verb
  /** The API group; "" for the core group. */
  readonly group: string
  /** The plural, with its subresource (`nodeimages/status`) as RBAC names it. */
  readonly resource: string
  /** Undefined: cluster-wide (a cluster-scoped kind, or a namespaced one in all namespaces). */
  readonly namespace?: string | undefined
}

export const rbacRuleOf = (request: RequestTarget): RbacRule => {
  const slash = request.resource.apiVersion.indexOf("/")
  return {
    verb: request.verb,
    group: slash < 0 ? "" : request.resource.apiVersion.slice(0, slash),
    resource: request.subresource === undefined ? request.resource.plural : `${request.resource.plural}/${request.subresource}`,
    namespace: request.resource.namespaced ? request.namespace : undefined
  }
}

/** `list imagepulljobs.apps.kruise.io in namespace "x" (verb=list, group=apps.kruise.io, resource=imagepulljobs)` */
export const describeRule = (rule: RbacRule, name = ""): string => {
  const plural = rule.resource.split("/")
  const qualified = [rule.group === "" ? plural[0] : `${plural[0]}.${rule.group}`, ...plural.slice(1)].join("/")
  const where = rule.namespace === undefined ? "cluster-wide" : `in namespace "${rule.namespace}"`
  return `${rule.verb} ${qualified}${name === "" ? "" : ` "${name}"`} ${where} (verb=${rule.verb}, group=${rule.group === "" ? '""' : rule.group}, resource=${rule.resource})`
}

/** What a 403 says: the rule to grant and where, then the server's own words. */
const forbiddenMessage = (request: RequestTarget, serverMessage: string): string => {
  const rule = rbacRuleOf(request)
  const binding = rule.namespace === undefined ? "ClusterRoleBinding" : "RoleBinding"
  return `forbidden: ${describeRule(rule, request.name)}: grant it in deploy/rbac.yaml or your ${binding}: ${serverMessage}`
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

  // Neither is retried like a 5xx: new credentials or a new RBAC rule are needed, not patience.
  if (code === 401) return new Unauthorized({ ...target, verb: request.verb, reason: message })
  if (code === 403) return new Forbidden({ ...target, verb: request.verb, message: forbiddenMessage(request, message) })
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
 * on a get) says the server or something between is misbehaving, which a retry may outlast. Every
 * verb can be Unauthorized, as every verb can be Unavailable.
 */
export const narrowTo =
  <const Tags extends KubeError["_tag"]>(allowed: ReadonlyArray<Tags>) =>
  (error: KubeError, request: RequestTarget): Extract<KubeError, { readonly _tag: Tags }> | Unauthorized | Unavailable =>
    error._tag === "Unavailable" || error._tag === "Unauthorized" || (allowed as ReadonlyArray<string>).includes(error._tag)
      ? (error as Extract<KubeError, { readonly _tag: Tags }> | Unauthorized | Unavailable)
      : unavailableOf(request, `unexpected ${error._tag}: ${"message" in error ? error.message : ""}`)

/**
 * What went wrong below HTTP, from the request's error and its cause if it has one; a failed TLS
 * handshake is explained with the kubeconfig field to fix (tlsErrors.ts).
 */
const reasonOf = (error: unknown): string => {
  const tls = tlsProblemOf(error)
  if (tls !== undefined) return explainTls(tls)
  if (!(error instanceof Error)) return String(error)
  const cause: unknown = error.cause
  const detail = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : ""
  const reason = detail === "" || detail === error.message ? error.message : `${error.message}: ${detail}`
  return reason.split("\n")[0] ?? reason
}

/** Node's codes for a server that cannot be reached or dropped the connection. */
const unreachableCodes: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE"
])

const codesOf = (error: unknown): ReadonlyArray<string> => {
  const codes: Array<string> = []
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string") codes.push(code)
  }
  return codes
}

/**
 * Why no credential could be had: the exec plugin's failure, or a token file never read, where
 * `error` is one (or wraps one: a watch's authentication runs it as a promise).
 */
const credentialFailureOf = (error: unknown): ExecPluginError | TokenFileError | undefined => {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof ExecPluginError || current instanceof TokenFileError) return current
  }
  return undefined
}

/** Why no connection could be had, when that is what `error` (the request's rejection) says. */
const connectionProblemOf = (error: unknown): ConnectionProblem | undefined => {
  const credential = credentialFailureOf(error)
  if (credential !== undefined) return { _tag: "NoCredential", reason: credential.message }
  const tls = tlsProblemOf(error)
  if (tls !== undefined) return tls
  const code = codesOf(error).find((code) => unreachableCodes.has(code))
  return code === undefined ? undefined : { _tag: "Unreachable", reason: redact(reasonOf(error)), code }
}

/** A request that got no answer (refused, reset, a failed TLS handshake), as Unavailable saying why. */
export const noAnswerOf = (request: RequestTarget, error: unknown): Unavailable => {
  const connection = connectionProblemOf(error)
  return new Unavailable({
    message: `${describe(request)}: ${redact(reasonOf(error))}`,
    ...(connection === undefined ? {} : { connection })
  })
}
