import { Data } from "effect"

/** The runtime socket does not answer (gRPC UNAVAILABLE): retry, the runtime may be restarting. */
export class RuntimeUnavailable extends Data.TaggedError("RuntimeUnavailable")<{ readonly message: string }> {}

/** The call ran out of time (gRPC DEADLINE_EXCEEDED); the runtime cancels the pull. */
export class DeadlineExceeded extends Data.TaggedError("DeadlineExceeded")<{ readonly image: string }> {}

/** The registry has no such repository or tag (gRPC NOT_FOUND). */
export class ImageNotFound extends Data.TaggedError("ImageNotFound")<{ readonly image: string; readonly message: string }> {}

/** The registry refused the credentials, or asked for some (a 401 in the runtime's message). */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly image: string; readonly message: string }> {}

/**
 * The registry throttles pulls: it answered HTTP 429 (`toomanyrequests`, as Docker Hub words its
 * rate limit). Not the image's fault: worth retrying later, and a reason to pull less at once.
 */
export class RegistryThrottled extends Data.TaggedError("RegistryThrottled")<{ readonly image: string; readonly message: string }> {}

/** The runtime could not parse the reference. */
export class InvalidReference extends Data.TaggedError("InvalidReference")<{ readonly image: string; readonly message: string }> {}

/** Anything else the runtime reported, with its message (never containing credentials). */
export class RuntimeFailure extends Data.TaggedError("RuntimeFailure")<{ readonly message: string }> {}

export type CriError =
  | RuntimeUnavailable
  | DeadlineExceeded
  | ImageNotFound
  | Unauthorized
  | RegistryThrottled
  | InvalidReference
  | RuntimeFailure
