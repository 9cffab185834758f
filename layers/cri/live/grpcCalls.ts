import * as grpc from "@grpc/grpc-js"
import { Data, Duration, Effect, Predicate } from "effect"

/**
 * gRPC calls as Effects over grpc-js's dynamic clients. A failure is a GrpcCallFailed with the
 * peer's status for the caller to map; interrupting the fiber cancels the call, and a runtime
 * cancels the work of a cancelled call (containerd stops the pull).
 */

/** A failed call: the gRPC status the peer (or grpc-js) gave, or what else went wrong on the way. */
export class GrpcCallFailed extends Data.TaggedError("GrpcCallFailed")<{
  readonly method: string
  /** The gRPC status code; undefined for a failure that carries none. */
  readonly code: number | undefined
  /** The peer's own text, when it gave one. */
  readonly details: string | undefined
  /** grpc-js's message ("<code> <NAME>: " before the peer's text), or the failure as a string. */
  readonly text: string
}> {}

const callFailed = (method: string, error: unknown): GrpcCallFailed =>
  Predicate.hasProperty(error, "code") &&
  Predicate.isNumber(error.code) &&
  Predicate.hasProperty(error, "message") &&
  Predicate.isString(error.message)
    ? new GrpcCallFailed({
        method,
        code: error.code,
        details: Predicate.hasProperty(error, "details") && Predicate.isString(error.details) ? error.details : undefined,
        text: error.message
      })
    : new GrpcCallFailed({ method, code: undefined, details: undefined, text: String(error) })

export interface CallOptions {
  readonly timeout: Duration.Input
  /** containerd's own services need the namespace in the `containerd-namespace` header. */
  readonly namespace?: string
  /**
   * containerd's lease for what the call creates (`containerd-lease` header): containerd, CRI's pull
   * included, then keeps it under that lease instead of one of its own (pullLeases.ts).
   */
  readonly lease?: string | undefined
}

type Callback = (error: grpc.ServiceError | null, response?: unknown) => void
type UnaryMethod = (request: object, metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback) => grpc.ClientUnaryCall
type StreamMethod = (request: object, metadata: grpc.Metadata, options: grpc.CallOptions) => grpc.ClientReadableStream<unknown>

const method = <M>(client: grpc.Client, name: string): M => {
  const fn = (client as unknown as Record<string, unknown>)[name]
  if (typeof fn !== "function") throw new Error(`gRPC client has no method ${name}`)
  return fn.bind(client) as M
}

const metadataFor = (options: CallOptions): grpc.Metadata => {
  const metadata = new grpc.Metadata()
  if (options.namespace !== undefined) metadata.set("containerd-namespace", options.namespace)
  if (options.lease !== undefined) metadata.set("containerd-lease", options.lease)
  return metadata
}

/** gRPC deadlines are wall-clock instants checked by the peer too, so not the Effect Clock. */
const deadline = (options: CallOptions): number => Date.now() + Duration.toMillis(options.timeout)

export const unary = <Res>(client: grpc.Client, name: string, request: object, options: CallOptions): Effect.Effect<Res, GrpcCallFailed> =>
  Effect.callback<Res, GrpcCallFailed>((resume) => {
    const call = method<UnaryMethod>(client, name)(request, metadataFor(options), { deadline: deadline(options) }, (error, response) => {
      resume(error !== null ? Effect.fail(callFailed(name, error)) : Effect.succeed(response as Res))
    })
    return Effect.sync(() => call.cancel())
  })

/** A server-streamed call, gathered into the list of its messages. */
export const serverStream = <Res>(
  client: grpc.Client,
  name: string,
  request: object,
  options: CallOptions
): Effect.Effect<ReadonlyArray<Res>, GrpcCallFailed> =>
  Effect.callback<ReadonlyArray<Res>, GrpcCallFailed>((resume) => {
    const messages: Array<Res> = []
    const stream = method<StreamMethod>(client, name)(request, metadataFor(options), { deadline: deadline(options) })
    stream.on("data", (message: Res) => messages.push(message))
    stream.on("error", (error: unknown) => resume(Effect.fail(callFailed(name, error))))
    stream.on("end", () => resume(Effect.succeed(messages)))
    return Effect.sync(() => stream.cancel())
  })

export const isGrpcCode = (error: GrpcCallFailed, code: grpc.status): boolean => error.code === code
