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

/** 401/403: the credentials or RBAC do not allow the request. */
export class Forbidden extends Data.TaggedError("Forbidden")<Target & { readonly verb: string; readonly message: string }> {}

/** The server could not be reached or answered 429/5xx: retry with backoff. */
export class Unavailable extends Data.TaggedError("Unavailable")<{ readonly message: string }> {}

export type KubeError = NotFound | AlreadyExists | Conflict | Gone | Invalid | Forbidden | Unavailable

const failedTest = /^testing value (.*) failed: test failed$/

/**
 * The path whose JSON patch `test` failed, when `message` is the json-patch library's words for
 * that (kube-apiserver sends them as the cause of a 422): a precondition that no longer held,
 * which KubeApi reports as the Conflict it is, not as an invalid object.
 */
export const failedTestPath = (message: string): string | undefined => failedTest.exec(message)?.[1]
