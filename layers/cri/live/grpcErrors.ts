import {
  type CriError,
  DeadlineExceeded,
  ImageNotFound,
  InvalidReference,
  RegistryThrottled,
  RuntimeFailure,
  RuntimeUnavailable,
  Unauthorized
} from "../../../src/cri/errors.ts"
import type { GrpcCallFailed } from "./grpcCalls.ts"

/** The gRPC status codes the mapping looks at (grpc-js `status`, without importing grpc here). */
const Code = { CANCELLED: 1, UNKNOWN: 2, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, UNAVAILABLE: 14 } as const

const redacted = "<redacted>"

/**
 * Removes anything that looks like a credential from a runtime's message: the exact secrets of
 * the call (a registry may echo them back), then auth headers, URL user info and token query
 * parameters. Messages end up in NodeImage status, events and logs, which many can read.
 */
export const redact = (message: string, secrets: ReadonlyArray<string> = []): string => {
  let text = message
  // Short strings would blank out ordinary words; the patterns below still cover headers.
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join(redacted)
  return text
    .replace(/\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(?:basic|bearer)\s+)?[^\s"',;]+/gi, `$1$2${redacted}`)
    .replace(/\b(basic|bearer)\s+[A-Za-z0-9+/=._~-]{8,}/gi, `$1 ${redacted}`)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, `$1${redacted}@`)
    .replace(/\b(access_token|refresh_token|id_token|token|password|passwd|secret)=[^&\s"']+/gi, `$1=${redacted}`)
}

/** The secrets of one pull's credentials, for {@link redact}. */
export const secretsOf = (
  auth:
    | {
        readonly username?: string
        readonly password?: string
        readonly auth?: string
        readonly identityToken?: string
        readonly registryToken?: string
      }
    | undefined
): ReadonlyArray<string> => {
  if (auth === undefined) return []
  const secrets = [auth.password, auth.auth, auth.identityToken, auth.registryToken]
  if (auth.username !== undefined && auth.password !== undefined) {
    secrets.push(Buffer.from(`${auth.username}:${auth.password}`).toString("base64"))
  }
  return secrets.filter((s): s is string => s !== undefined && s !== "")
}

export interface CallContext {
  /** The gRPC method, for messages about calls that name no image. */
  readonly method: string
  /** The image the call is about, when it is about one. */
  readonly image?: string
  readonly secrets?: ReadonlyArray<string>
}

/**
 * A registry's rate limit in the runtime's words. containerd 1.6/1.7 say `unexpected status from
 * HEAD request to <url>: 429 Too Many Requests` when resolving, and add the registry's error body
 * (`toomanyrequests: ...`, Docker Hub's code) when fetching; the e2e suite checks the real text.
 */
const throttledText = /\btoomanyrequests\b|\b429 Too Many Requests\b/i

/**
 * A failed call as one of the typed CRI errors. containerd reports registry failures as UNKNOWN
 * with the registry's words in the text (`401 Unauthorized`, `429 Too Many Requests`, `invalid
 * reference format`), so the
 * text decides those; the status code decides the rest.
 */
export const criErrorFrom = (error: GrpcCallFailed, context: CallContext): CriError => {
  if (error.code === undefined) {
    return new RuntimeFailure({ message: redact(`${context.method}: ${error.text}`, context.secrets) })
  }
  // grpc-js puts "<code> <NAME>: " before the runtime's own text in `text`; `details` is the text.
  const message = redact(error.details !== undefined && error.details !== "" ? error.details : error.text, context.secrets)
  const image = context.image
  switch (error.code) {
    case Code.UNAVAILABLE:
    // We never see our own cancellations (the fiber is interrupted first): CANCELLED comes from a
    // runtime or connection going away mid-call, as when containerd restarts.
    case Code.CANCELLED:
      return new RuntimeUnavailable({ message: `${context.method}: ${message}` })
    case Code.DEADLINE_EXCEEDED:
      // A call about no image that times out means the runtime is not answering.
      return image !== undefined
        ? new DeadlineExceeded({ image })
        : new RuntimeUnavailable({ message: `${context.method}: no answer before the deadline` })
    case Code.NOT_FOUND:
      return image !== undefined ? new ImageNotFound({ image, message }) : new RuntimeFailure({ message })
  }
  if (image !== undefined && throttledText.test(message)) return new RegistryThrottled({ image, message })
  if (image !== undefined && /unauthorized/i.test(message)) return new Unauthorized({ image, message })
  if (image !== undefined && /invalid reference format/i.test(message)) return new InvalidReference({ image, message })
  return new RuntimeFailure({ message: error.code === Code.UNKNOWN ? message : `${context.method}: ${message}` })
}
