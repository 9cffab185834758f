import { Data } from "effect"

/**
 * Where an API error happened, for messages a user can act on. The object's name is `objectName`:
 * a field called `name` would replace the error's own name in every printed cause.
 */
interface Target {
  readonly kind: string
  readonly objectName: string
  readonly namespace?: string
}

const describe = (target: Target): string =>
  `${target.kind} ${target.namespace === undefined ? "" : `${target.namespace}/`}${target.objectName}`

/** 404: the object (or its namespace) does not exist. */
export class NotFound extends Data.TaggedError("NotFound")<Target> {
  override get message(): string {
    return `${describe(this)} not found`
  }
}

/** 409 on create: an object of that name exists. */
export class AlreadyExists extends Data.TaggedError("AlreadyExists")<Target> {
  override get message(): string {
    return `${describe(this)} already exists`
  }
}

/** 409 on update: the object changed since it was read; re-read and decide again. */
export class Conflict extends Data.TaggedError("Conflict")<Target & { readonly message: string }> {}

/** 410: a watch resumed from a resourceVersion the server no longer has; list again. */
export class Gone extends Data.TaggedError("Gone")<{ readonly kind: string; readonly message: string }> {}

/** 422: the server rejected the object; causes carry field paths. */
export class Invalid extends Data.TaggedError("Invalid")<
  Target & { readonly causes: ReadonlyArray<{ readonly field: string; readonly message: string }> }
> {
  override get message(): string {
    return `${describe(this)} is invalid: ${this.causes.map((c) => (c.field === "" ? c.message : `${c.field}: ${c.message}`)).join("; ")}`
  }
}

/**
 * 403: the server knows who is asking but RBAC does not allow the request; the message names the
 * rule to grant. Retrying changes nothing until someone grants it.
 */
export class Forbidden extends Data.TaggedError("Forbidden")<Target & { readonly verb: string; readonly message: string }> {}

/**
 * 401: the server did not accept the credentials (expired or revoked token, a client certificate it
 * does not trust). `reason` is the server's own message.
 */
export class Unauthorized extends Data.TaggedError("Unauthorized")<Target & { readonly verb: string; readonly reason: string }> {
  override get message(): string {
    return `${this.verb} ${this.objectName === "" ? this.kind : describe(this)}: 401 Unauthorized${this.reason === "" || this.reason === "Unauthorized" ? "" : `: ${this.reason}`}`
  }
}

/** Why a TLS handshake with the API server failed, in the terms of what to fix. */
export type TlsProblem = "UnknownCa" | "HostNameMismatch" | "CertificateExpired" | "ClientCertificateRefused"

/**
 * Why no answer came, when it is about reaching the server at all rather than the request: the
 * TLS handshake failed, or the connection was refused, reset or never made.
 */
export type ConnectionProblem =
  | {
      readonly _tag: "Tls"
      readonly problem: TlsProblem
      /** Node's error code (UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID, ...). */
      readonly code: string
      /** What Node said, first line; for a name mismatch also the names the certificate covers. */
      readonly detail: string
      /** When the server's certificate expired, where it is known (ISO 8601). */
      readonly notAfter?: string
    }
  | {
      readonly _tag: "Unreachable"
      readonly reason: string
      /** Node's code (ECONNREFUSED, ECONNRESET, EPIPE...). */
      readonly code: string
    }
  | {
      /** The kubeconfig's exec plugin gave no credential, or its token file was never read, so no request could be sent. */
      readonly _tag: "NoCredential"
      /** What the plugin did, naming its command and installHint (never its output), or why the token file cannot be read. */
      readonly reason: string
    }

/**
 * The server could not be reached or answered 429/5xx: retry with backoff. `connection` says why
 * when it was not reached at all.
 */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly message: string
  readonly connection?: ConnectionProblem
}> {}

export type KubeError = NotFound | AlreadyExists | Conflict | Gone | Invalid | Forbidden | Unauthorized | Unavailable

/**
 * A failure that is about reaching the API server at all rather than about the request: refused
 * credentials, a missing RBAC rule, a failed TLS handshake or no connection.
 */
export const isAccessProblem = (error: KubeError): boolean =>
  error._tag === "Unauthorized" || error._tag === "Forbidden" || (error._tag === "Unavailable" && error.connection !== undefined)

const failedTest = /^testing value (.*) failed: test failed$/

/**
 * The path whose JSON patch `test` failed, when `message` is the json-patch library's words for
 * that (kube-apiserver sends them as the cause of a 422): a precondition that no longer held,
 * which KubeApi reports as the Conflict it is, not as an invalid object.
 */
export const failedTestPath = (message: string): string | undefined => failedTest.exec(message)?.[1]
