// A watch as an Effect Stream over client-node's Watch. The stream only reports how the watch ended
// (server closed it: the stream ends; 410: Gone; anything else: typed failure); resuming, re-listing
// and backing off are the caller's loop (client-node's informer instead stops for good on errors).
import { Watch } from "@kubernetes/client-node"
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

const resourceVersionOf = (object: unknown): string | undefined => {
  const metadata = Predicate.isObject(object) ? object["metadata"] : undefined
  const resourceVersion = Predicate.isObject(metadata) ? metadata["resourceVersion"] : undefined
  return typeof resourceVersion === "string" ? resourceVersion : undefined
}

// Watch's done callback gets an Error with statusCode for a non-200 answer, else fetch's own error.
const doneErrorOf = (error: unknown, target: RequestTarget): WatchError => {
  const code: unknown = Predicate.isObject(error) ? error["statusCode"] : undefined
  return typeof code === "number" ? asWatchError(kubeErrorOf(code, undefined, target), target) : noAnswerOf(target, error)
}

/**
 * The events of one watch request. The rate limiter is asked once, when it starts; interrupting
 * the consumer aborts the HTTP request.
 */
export const watchStream = (
  transport: Pick<Transport, "watchAuthentication">,
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

    const start = Effect.sync(() => {
      let stopped = false
      const authentication = transport.watchAuthentication()
      const watch = new Watch(authentication.config)
      // Watch aborts a request silent for 30 s, shorter than the server's bookmark interval (1 min), so
      // idle watches would fail twice a minute. The field is private to TypeScript only, in the exact
      // client-node version package.json pins; kubeLive.test.ts fails if it stops being honoured.
      ;(watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = request.idleTimeoutMillis
      let unregister: () => void = () => undefined
      const started = watch.watch(request.path, request.query, onEvent, (error: unknown) => {
        if (stopped) return
        stopped = true
        unregister()
        if (error === null || error === undefined) return Queue.endUnsafe(queue)
        // Refused credentials: an exec plugin's are replaced before the caller's loop watches again.
        if (Predicate.isObject(error) && error["statusCode"] === 401) authentication.rejected()
        fail(doneErrorOf(error, target))
      })
      // Before it sends anything, watch() itself rejects when the credentials cannot be had.
      started.catch((error: unknown) => {
        if (!stopped) fail(noAnswerOf(target, error))
      })
      const stop = () => {
        if (stopped) return
        stopped = true
        unregister()
        void started.then(
          (controller) => controller.abort(),
          () => undefined
        )
      }
      // Its connection's client certificate was replaced: end as the server would, to be resumed on the new one.
      unregister = authentication.onRetired(() => {
        if (stopped) return
        stop()
        Queue.endUnsafe(queue)
      })
      return stop
    })

    return Effect.andThen(
      limiter.take,
      Effect.acquireRelease(start, (stop) => Effect.sync(stop))
    )
  })
