// One HTTP request over a connection pool (connectionPool.ts): the transport's requests and its
// watches. Node's own errors come back as they are (refused, reset, a failed TLS handshake:
// statusErrors.ts and tlsErrors.ts read their codes); an abort comes back as the signal's reason.
import http from "node:http"
import https from "node:https"

export interface RequestInit {
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
  readonly agent: http.Agent
  readonly signal: AbortSignal
}

/**
 * The answer, once its head arrived (its body still to read); rejects when no answer came. An
 * abort after that ends the body with the signal's reason (a watch's idle timeout reads it).
 */
export const sendRequest = (url: URL, init: RequestInit): Promise<http.IncomingMessage> =>
  new Promise((resolve, reject) => {
    const { signal } = init
    if (signal.aborted) return reject(signal.reason)
    // Node frames a body on its own only for methods that usually carry one (not DELETE: a
    // DeleteOptions body went out unframed, and the server took it for the next request), so
    // every body goes with its length.
    const framed = init.body === undefined ? {} : { "content-length": String(Buffer.byteLength(init.body)) }
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      { method: init.method, headers: { ...init.headers, ...framed }, agent: init.agent },
      (message) => {
        signal.removeEventListener("abort", onAbort)
        const onBodyAbort = () => message.destroy(signal.reason)
        signal.addEventListener("abort", onBodyAbort, { once: true })
        message.once("close", () => signal.removeEventListener("abort", onBodyAbort))
        resolve(message)
      }
    )
    const onAbort = () => {
      request.destroy(signal.reason)
      reject(signal.reason)
    }
    signal.addEventListener("abort", onAbort, { once: true })
    request.once("error", (error) => {
      signal.removeEventListener("abort", onAbort)
      reject(error)
    })
    request.end(init.body)
  })

/** The whole body as text; rejects when it ends early. Listeners, not `for await`: the iterator costs a promise per chunk. */
export const textOf = (message: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    message.on("data", (chunk: Buffer) => chunks.push(chunk))
    message.once("end", () => resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")))
    message.once("error", reject)
    message.once("close", () => {
      if (!message.readableEnded) reject(message.errored ?? new Error("the answer ended early"))
    })
  })
