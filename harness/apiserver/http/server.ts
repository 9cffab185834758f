/**
 * The embedded API server's HTTP front: node:http, as the ops server, because watches need a
 * response whose headers are flushed at once and whose body is written event by event, and the
 * request handling is the project's own (dispatch.ts). It runs on Node, in the single executable
 * and on Deno's node:http.
 */
import { EncodedJson } from "./encodedJson.ts"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { timingSafeEqual } from "node:crypto"
import { Cause, Data, Effect, FiberSet, Stream } from "effect"
import type { Scope } from "effect"
import type { KubeApi } from "../../../src/kube/KubeApi.ts"
import { ApiFailure, unauthorized } from "./apiStatus.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { dispatch } from "./dispatch.ts"
import { namespaceController } from "../admission/namespaceLifecycle.ts"
import type { DispatchSettings } from "./dispatch.ts"
import { makeOpenApiDocuments } from "./openApiDocuments.ts"
import { parseAccept } from "./negotiation.ts"
import { Pager } from "../storage/pagination.ts"
import { failureReply } from "./reply.ts"
import type { Reply } from "./reply.ts"

export interface ApiServerOptions {
  /** Default 127.0.0.1: the server has no TLS, so it listens on loopback unless told otherwise. */
  readonly host?: string
  /** 0 (the default) picks a free port; the bound one is reported. */
  readonly port?: number
  /** When set, every request but the health checks needs `Authorization: Bearer <token>` (else 401). */
  readonly token?: string
  /** Reject what the controller would mark invalid too (see decoderAdmission.ts). */
  readonly decoderAdmission?: boolean
}

export interface ApiServerAddress {
  readonly host: string
  readonly port: number
  /** `http://host:port`, for kubeconfigs and clients. */
  readonly url: string
}

export class ApiServerError extends Data.TaggedError("ApiServerError")<{
  readonly message: string
  readonly cause: unknown
}> {}

/** kube-apiserver's limit on request bodies (3 MiB). */
const maxBodyBytes = 3 * 1024 * 1024

const tooLarge = new ApiFailure({ code: 413, reason: "RequestEntityTooLarge", message: "Request entity too large: limit is 3145728" })

/**
 * How long a refused connection stays half-closed before it closes: Go's net/http waits the same
 * (rstAvoidanceDelay). Closing a socket with unread input makes the kernel answer the client's next
 * write with a reset, which can discard the 413 before the client has read it; half-closing first
 * and not reading meanwhile lets the answer arrive while the client's writes stall on full buffers.
 */
const lingerMillis = 500

const lingerBeforeClose = (socket: Socket) => {
  // The HTTP server closes a connection it will not keep alive with destroySoon(); only this
  // socket's closing is replaced.
  socket.destroySoon = () => {
    socket.pause()
    socket.end()
    setTimeout(() => socket.destroy(), lingerMillis).unref()
  }
}

/**
 * The body, at most maxBodyBytes of it. A larger one is refused with 413 as soon as it is known to
 * be larger (its Content-Length, else the first byte past the limit), without reading the rest:
 * the connection closes after the answer instead of draining megabytes nobody will use.
 */
const readBody = (request: http.IncomingMessage, response: http.ServerResponse) =>
  Effect.callback<Buffer, ApiFailure>((resume) => {
    const refuse = () => {
      request.removeAllListeners("data")
      request.pause()
      response.shouldKeepAlive = false
      lingerBeforeClose(request.socket)
      resume(Effect.fail(tooLarge))
    }
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return refuse()
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) refuse()
      else chunks.push(chunk)
    })
    request.on("end", () => resume(Effect.succeed(Buffer.concat(chunks))))
    request.on("error", () => resume(Effect.succeed(Buffer.alloc(0))))
  })

const authorized = (token: string | undefined, request: http.IncomingMessage, pathname: string): boolean => {
  if (token === undefined || pathname === "/healthz" || pathname === "/livez" || pathname === "/readyz") return true
  const header = request.headers.authorization ?? ""
  const expected = Buffer.from(`Bearer ${token}`)
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

// Writes one chunk, waiting for the socket to drain when its buffer is full.
const write = (response: http.ServerResponse, chunk: string) =>
  Effect.callback<void>((resume) => {
    if (response.destroyed) return resume(Effect.interrupt)
    if (response.write(chunk)) return resume(Effect.void)
    const onDrain = () => {
      response.off("close", onClose)
      resume(Effect.void)
    }
    const onClose = () => {
      response.off("drain", onDrain)
      resume(Effect.interrupt)
    }
    response.once("drain", onDrain)
    response.once("close", onClose)
  })

const send = (request: http.IncomingMessage, response: http.ServerResponse, reply: Reply): Effect.Effect<void> => {
  if (response.headersSent || response.destroyed) return Effect.void
  if (reply._tag === "Body") {
    return Effect.sync(() => {
      response.writeHead(reply.status, {
        ...reply.headers,
        "content-type": reply.contentType,
        "content-length": Buffer.byteLength(reply.body),
        "cache-control": reply.headers["cache-control"] ?? "no-cache, private"
      } as http.OutgoingHttpHeaders)
      response.end(request.method === "HEAD" ? undefined : reply.body)
    })
  }
  return Effect.gen(function* () {
    response.writeHead(200, { "content-type": reply.contentType, "cache-control": "no-cache, private", "transfer-encoding": "chunked" })
    // Clients (client-node's watch) resolve only once the headers arrive: send them now.
    response.flushHeaders()
    response.socket?.setNoDelay(true)
    yield* Stream.runForEach(reply.events, (line) => write(response, line))
    response.end()
  })
}

// A defect is a bug of this server: the client gets a 500 with its message, the log the whole cause.
const internalError = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  const message = error instanceof Error ? error.message : String(error)
  return Effect.as(
    Effect.logError("embedded API server: request failed", cause),
    failureReply(new ApiFailure({ code: 500, reason: "InternalError", message: `Internal error occurred: ${message}` }))
  )
}

/**
 * Serves the KubeApi in context over HTTP until the scope closes; then it stops listening, ends
 * open watches and drops keep-alive connections. The namespace lifecycle runs alongside, since
 * the namespaces created through this server wait for it to empty them when deleted.
 */
export const serveApi = (options: ApiServerOptions = {}): Effect.Effect<ApiServerAddress, ApiServerError, KubeApi | Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const run = yield* FiberSet.makeRuntime<KubeApi>()
    yield* Effect.forkScoped(namespaceController())
    const settings: { -readonly [K in keyof DispatchSettings]: DispatchSettings[K] } = {
      pager: new Pager(),
      decoderAdmission: options.decoderAdmission ?? false,
      serverAddress: "",
      openApi: makeOpenApiDocuments(),
      json: new EncodedJson()
    }

    const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const url = new URL(request.url ?? "/", "http://apiserver.local")
      const fiber = run(
        Effect.gen(function* () {
          if (!authorized(options.token, request, url.pathname)) return yield* send(request, response, failureReply(unauthorized()))
          const body = yield* readBody(request, response)
          const apiRequest: ApiRequest = {
            method: request.method ?? "GET",
            url,
            accept: parseAccept(request.headers.accept),
            contentType: (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase(),
            userAgent: request.headers["user-agent"] ?? "",
            body
          }
          const reply = yield* dispatch(settings, apiRequest)
          yield* Effect.logDebug(`${apiRequest.method} ${request.url ?? "/"} ${reply._tag === "Body" ? reply.status : "200 (stream)"}`)
          yield* send(request, response, reply)
        }).pipe(
          Effect.catch((failure: ApiFailure) => send(request, response, failureReply(failure))),
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.flatMap(internalError(cause), (reply) => send(request, response, reply))
          )
        )
      )
      // The client went away (or the reply is done): stop whatever still runs for it.
      response.on("close", () => fiber.interruptUnsafe())
    }

    const server = yield* Effect.acquireRelease(
      Effect.callback<http.Server, ApiServerError>((resume) => {
        const server = http.createServer({ keepAliveTimeout: 30_000 }, handle)
        const onError = (cause: Error) =>
          resume(Effect.fail(new ApiServerError({ message: `cannot listen on ${host}:${options.port ?? 0}: ${cause.message}`, cause })))
        server.once("error", onError)
        server.listen(options.port ?? 0, host, () => {
          server.off("error", onError)
          server.on("error", () => undefined)
          resume(Effect.succeed(server))
        })
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    const port = (server.address() as AddressInfo).port
    const shown = host.includes(":") ? `[${host}]` : host
    settings.serverAddress = `${shown}:${port}`
    return { host, port, url: `http://${shown}:${port}` }
  })
