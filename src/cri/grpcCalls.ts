import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"

/**
 * gRPC calls as Effects over grpc-js's dynamic clients. Errors stay raw (grpc-js ServiceError) for
 * the caller to map; interrupting the fiber cancels the call, and a runtime cancels the work of a
 * cancelled call (containerd stops the pull).
 */

export interface CallOptions {
  readonly timeout: Duration.Input
  /** containerd's own services need the namespace in the `containerd-namespace` header. */
  readonly namespace?: string
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
  return metadata
}

/** gRPC deadlines are wall-clock instants checked by the peer too, so not the Effect Clock. */
const deadline = (options: CallOptions): number => Date.now() + Duration.toMillis(options.timeout)

export const unary = <Res>(client: grpc.Client, name: string, request: object, options: CallOptions): Effect.Effect<Res, unknown> =>
  Effect.callback<Res, unknown>((resume) => {
    const call = method<UnaryMethod>(client, name)(request, metadataFor(options), { deadline: deadline(options) }, (error, response) => {
      resume(error !== null ? Effect.fail(error) : Effect.succeed(response as Res))
    })
    return Effect.sync(() => call.cancel())
  })

/** A server-streamed call, gathered into the list of its messages. */
export const serverStream = <Res>(
  client: grpc.Client,
  name: string,
  request: object,
  options: CallOptions
): Effect.Effect<ReadonlyArray<Res>, unknown> =>
  Effect.callback<ReadonlyArray<Res>, unknown>((resume) => {
    const messages: Array<Res> = []
    const stream = method<StreamMethod>(client, name)(request, metadataFor(options), { deadline: deadline(options) })
    stream.on("data", (message: Res) => messages.push(message))
    stream.on("error", (error: unknown) => resume(Effect.fail(error)))
    stream.on("end", () => resume(Effect.succeed(messages)))
    return Effect.sync(() => stream.cancel())
  })

export const isGrpcCode = (error: unknown, code: grpc.status): boolean =>
  typeof error === "object" && error !== null && (error as { readonly code?: unknown }).code === code
