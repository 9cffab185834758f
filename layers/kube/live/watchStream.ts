// A watch as an Effect Stream over one watch request of the transport: newline-delimited JSON
// events. The stream only reports how the watch ended (server closed it: the stream ends; 410:
// Gone; anything else: typed failure); resuming, re-listing and backing off are the caller's loop
// (src/kube/informer.ts; client-node's informer instead stops for good on errors).
import type http from "node:http"
import { Cause, Effect, Predicate, Queue, Stream } from "effect"
import type { Gone, Unavailable } from "../../../src/kube/errors.ts"
import type { Refused, WatchEvent } from "../../../src/kube/KubeApi.ts"
import { asKubeObject } from "./objects.ts"
import type { RateLimiter } from "./rateLimiter.ts"
import { kubeErrorOf, narrowTo, noAnswerOf, type RequestTarget, statusOf, unavailableOf } from "./statusErrors.ts"
import type { Transport } from "./transport.ts"

export type WatchError = Gone | Refused | Unavailable

export interface WatchRequest {
  readonly path: string
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>
  /** The request is aborted (Unavailable) when nothing, not even a bookmark, arrived for this long. */
  readonly idleTimeoutMillis: number
}

const asWatchError = narrowTo(["Gone", "Forbidden"])

const queryOf = (query: WatchRequest["query"]): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(query).map(([key, value]) => [key, value === undefined ? undefined : String(value)]))

const resourceVersionOf = (object: unknown): string | undefined => {
  const metadata = Predicate.isObject(object) ? object["metadata"] : undefined
  const resourceVersion = Predicate.isObject(metadata) ? metadata["resourceVersion"] : undefined
  return typeof resourceVersion === "string" ? resourceVersion : undefined
}

/** Why an idle watch was given up, as the stream's failure says it. */
const idleTimeout = () => new DOMException("The operation was aborted due to timeout", "TimeoutError")

/**
 * Calls `onLine` with each line of `message`'s body and `done` once when it ends: with nothing
 * when the server ended it, else with why. `onData` is told of every chunk (the idle timer).
 */
const readLines = (
  message: http.IncomingMessage,
  onLine: (line: string) => void,
  onData: () => void,
  done: (error?: unknown) => void
): void => {
  message.setEncoding("utf8")
  let pending = ""
  message.on("data", (chunk: string) => {
    onData()
    const text = pending + chunk
    let start = 0
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      onLine(text.slice(start, end))
      start = end + 1
    }
    pending = text.slice(start)
  })
  message.once("end", () => {
    if (pending !== "") onLine(pending)
    done()
  })
  message.once("error", done)
  message.once("close", () => {
    if (!message.readableEnded) done(message.errored ?? new Error("the watch's answer ended early"))
  })
}

/**
 * The events of one watch request. The rate limiter is asked once, when it starts; interrupting
 * the consumer aborts the HTTP request.
 */
export const watchStream = (
  transport: Pick<Transport, "openWatch">,
  limiter: RateLimiter,
  request: WatchRequest,
  target: RequestTarget
): Stream.Stream<WatchEvent, WatchError> =>
  Stream.callback<WatchEvent, WatchError>((queue) => {
    const fail = (error: WatchError) => Queue.failCauseUnsafe(queue, Cause.fail(error))

    const onEvent = (type: string, object: unknown): void => {
      switch (type) {
        case "ADDED":
        case "MODIFIED":
        case "DELETED": {
          const kubeObject = asKubeObject(object)
          if (kubeObject === undefined) fail(unavailableOf(target, `a ${type} event without an object`))
          else Queue.offerUnsafe(queue, { type, object: kubeObject })
          return
        }
        case "BOOKMARK": {
          const resourceVersion = resourceVersionOf(object)
          if (resourceVersion === undefined) fail(unavailableOf(target, "a BOOKMARK event without a resourceVersion"))
          else Queue.offerUnsafe(queue, { type: "BOOKMARK", resourceVersion })
          return
        }
        case "ERROR": {
          // The server ends the stream after this; 410 Expired (too old resourceVersion) is the usual one.
          fail(asWatchError(kubeErrorOf(statusOf(object).code ?? 500, object, target), target))
          return
        }
      }
    }

    const onLine = (line: string): void => {
      let event: unknown
      try {
        event = JSON.parse(line)
      } catch {
        // Neither a blank line nor one cut short by a dropped connection is an event.
        return
      }
      if (Predicate.isObject(event) && typeof event["type"] === "string") onEvent(event["type"], event["object"])
    }

    const start = Effect.sync(() => {
      let stopped = false
      const controller = new AbortController()
      // Nothing at all (not even a bookmark) for this long: the connection is taken for dead.
      let timer: ReturnType<typeof setTimeout> | undefined
      const resetTimer = () => {
        clearTimeout(timer)
        timer = setTimeout(() => controller.abort(idleTimeout()), request.idleTimeoutMillis)
        timer.unref?.()
      }
      let unregister: () => void = () => undefined
      /** Ends the request once; false when it was ended already. */
      const stop = (): boolean => {
        if (stopped) return false
        stopped = true
        clearTimeout(timer)
        unregister()
        controller.abort()
        return true
      }
      const ended = (error?: unknown) => {
        if (!stop()) return
        if (error === undefined) Queue.endUnsafe(queue)
        else fail(noAnswerOf(target, error))
      }
      resetTimer()
      const watch = transport.openWatch(request.path, queryOf(request.query), controller.signal)
      watch.answer.then((message) => {
        if (message.statusCode === 200) {
          // Until now the limit was on the answer's head; from here on it is on silence.
          resetTimer()
          return readLines(message, onLine, resetTimer, ended)
        }
        message.resume()
        // Refused credentials: an exec plugin's are replaced before the caller's loop watches again.
        if (message.statusCode === 401) watch.rejected()
        if (stop()) fail(asWatchError(kubeErrorOf(message.statusCode ?? 0, undefined, target), target))
      }, ended)
      // Its connection's client certificate was replaced: end as the server would, to be resumed on the new one.
      unregister = watch.onRetired(() => ended())
      return stop
    })

    return Effect.andThen(
      limiter.take,
      Effect.acquireRelease(start, (stop) => Effect.sync(() => void stop()))
    )
  })
