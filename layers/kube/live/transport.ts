// One request to the API server, over node:http(s) on one keep-alive connection pool made with the
// kubeconfig's settings as client-node reads them (connectionPool.ts). Its headers are read once,
// or, for a user with an auth provider (OIDC...), from client-node before every request, which
// refreshes them there; token files are read in tokenFile.ts. An exec credential plugin is run
// here instead of by client-node (execCredentials/): cached until it expires, one run for all
// requests waiting, replaced after a 401 (the request then goes once more), and its client
// certificates used for new connections as soon as it hands out new ones (certificatePools.ts).
import type http from "node:http"
import type { KubeConfig } from "@kubernetes/client-node"
import { Data, Duration, Effect, Result, Schedule } from "effect"
import type { Scope } from "effect"
import type { Unavailable } from "../../../src/kube/errors.ts"
import { makeCertificatePools } from "./certificatePools.ts"
import { type ConnectionSettings, connectionSettingsOf, makeAgent } from "./connectionPool.ts"
import { type ExecAuthenticationOptions, makeExecAuthentication, withoutExecPlugin } from "./execCredentials/execAuthentication.ts"
import { hasExecSection } from "./execCredentials/execConfig.ts"
import type { ExecCredential } from "./execCredentials/execCredential.ts"
import { sendRequest, textOf } from "./httpRequest.ts"
import { tokenFileOf } from "./kubeConfig.ts"
import type { RateLimiter } from "./rateLimiter.ts"
import {
  decideOnAnswer,
  decideOnNoAnswer,
  maxRetries,
  readRetryBase,
  readRetryCap,
  type RetryDecision,
  retryAfterOf
} from "./retryPolicy.ts"
import { noAnswerOf, type RequestTarget, unavailableOf } from "./statusErrors.ts"
import { makeTokenFile, withoutTokenFileProvider } from "./tokenFile.ts"

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface HttpRequest {
  readonly method: HttpMethod
  readonly path: string
  readonly query?: Readonly<Record<string, string | undefined>>
  readonly body?: unknown
  readonly contentType?: string
}

/** Any HTTP answer; `body` is the parsed JSON, or undefined when the body was empty or not JSON. */
export interface HttpAnswer {
  readonly status: number
  readonly body: unknown
  /** The Retry-After header, when the server sent one. */
  readonly retryAfter?: string | undefined
}

export interface Transport {
  /**
   * Fails only when no answer came: refused, reset, timed out, or the credentials could not be had.
   * Retries what retryPolicy.ts says first (429 after Retry-After; reads after 5xx or no answer),
   * each attempt through the rate limiter; the last answer or failure is the result.
   */
  readonly send: (request: HttpRequest, target: RequestTarget) => Effect.Effect<HttpAnswer, Unavailable>
  /** One watch request (`watch=true` is added) with the same credentials, User-Agent and pools as `send`'s. */
  readonly openWatch: (path: string, query: Readonly<Record<string, string | undefined>>, signal: AbortSignal) => OpenWatch
}

export interface OpenWatch {
  /** The answer once its head arrived; rejects when none came (refused, reset, aborted, no credential). */
  readonly answer: Promise<http.IncomingMessage>
  /** The server answered this watch request 401: an exec plugin's credential it was made with is replaced. */
  readonly rejected: () => void
  /**
   * Calls `end` when the connection pool this watch was made on is retired (an exec plugin handed
   * out a new client certificate): the watch should end cleanly, to be resumed on the new pool.
   * The result unregisters.
   */
  readonly onRetired: (end: () => void) => () => void
}

export interface TransportOptions extends ExecAuthenticationOptions {
  readonly userAgent: string
  readonly limiter: RateLimiter
  /** How long a request may take before it is abandoned as Unavailable. */
  readonly requestTimeout: Duration.Duration
  /** Retries of one request at most (retryPolicy.ts decides which); default maxRetries. */
  readonly maxRetries?: number | undefined
}

/** A request the server did not answer within the transport's request timeout. */
class RequestTimedOut extends Data.TaggedError("RequestTimedOut")<{ readonly message: string }> {}

/** The exec plugin gave no credential: the request was not sent, and is not retried here (the plugin just ran). */
class NoCredential extends Data.TaggedError("NoCredential")<{ readonly error: Unavailable }> {}

/** An outcome the retry policy wants tried again, with how soon. */
class RetryWanted extends Data.TaggedError("RetryWanted")<{
  readonly decision: Exclude<RetryDecision, { readonly _tag: "Done" }>
  readonly outcome: Result.Result<HttpAnswer, Unavailable>
}> {}

/** Backoff for reads (250 ms doubling to 8 s, jittered); exactly the server's Retry-After where it gave one. */
const retrySchedule = Schedule.exponential(readRetryBase).pipe(
  Schedule.jittered,
  Schedule.modifyDelay(({ duration, input }: { readonly duration: Duration.Duration; readonly input: unknown }) =>
    Effect.succeed(
      input instanceof RetryWanted && input.decision._tag === "After" ? input.decision.delay : Duration.min(duration, readRetryCap)
    )
  )
)

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)))

export const makeTransport = Effect.fnUntraced(function* (
  config: KubeConfig,
  options: TransportOptions
): Effect.fn.Return<Transport, Error, Scope.Scope> {
  const exec = yield* makeExecAuthentication(config, options)
  // client-node reads everything but the plugin and the token file: CA, server name, proxy,
  // impersonation, tokens and auth providers. It would also run a plugin that client-go ignores
  // for a user with a token or certificate of its own.
  const tokenPath = tokenFileOf(config.getCurrentUser())
  const tokenFile = tokenPath === undefined ? undefined : yield* makeTokenFile(tokenPath)
  const base = withoutTokenFileProvider(hasExecSection(config.getCurrentUser()) ? withoutExecPlugin(config) : config)
  const settings: ConnectionSettings = yield* Effect.tryPromise({ try: () => connectionSettingsOf(base), catch: toError })
  const shared = yield* Effect.acquireRelease(Effect.try({ try: () => makeAgent(settings), catch: toError }), (agent) =>
    Effect.sync(() => agent.destroy())
  )
  const pools =
    exec === undefined
      ? undefined
      : yield* makeCertificatePools((certificate) => makeAgent(settings, certificate), shared, options.requestTimeout)
  const agentFor = (credential: ExecCredential | undefined): http.Agent =>
    credential === undefined || pools === undefined ? shared : pools.agentFor(credential)
  // An auth provider (OIDC, the cloud ones) may refresh its token: client-node is asked before every request.
  const refreshed = base.getCurrentUser()?.authProvider ? () => connectionSettingsOf(base).then((fresh) => fresh.headers) : undefined
  // Watches authenticate outside any fiber: they run the cache's effects with these services (its clock).
  const runPromise = Effect.runPromiseWith(yield* Effect.context<never>())
  const server = settings.server.href.replace(/\/$/, "")

  const headersFor = async (credential: ExecCredential | undefined): Promise<Record<string, string>> => {
    const headers: Record<string, string> = {
      ...(refreshed === undefined ? settings.headers : await refreshed()),
      "User-Agent": options.userAgent
    }
    if (tokenFile !== undefined) headers["Authorization"] = `Bearer ${tokenFile.token()}`
    if (credential?.token !== undefined) headers["Authorization"] = `Bearer ${credential.token}`
    return headers
  }

  const urlOf = (path: string, query: Readonly<Record<string, string | undefined>>): URL => {
    const url = new URL(`${server}${path}`)
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value)
    return url
  }

  const openWatch = (path: string, query: Readonly<Record<string, string | undefined>>, signal: AbortSignal): OpenWatch => {
    let seen: ExecCredential | undefined
    const answer = (async () => {
      seen = exec === undefined ? undefined : await runPromise(exec.current)
      const headers = { ...(await headersFor(seen)), Accept: "application/json" }
      return sendRequest(urlOf(path, { watch: "true", ...query }), { method: "GET", headers, agent: agentFor(seen), signal })
    })()
    return {
      answer,
      rejected: () => (exec === undefined || seen === undefined ? undefined : Effect.runSync(exec.rejected(seen))),
      onRetired: (end) => (pools === undefined ? () => undefined : pools.onRetired(() => seen, end))
    }
  }

  const exchange = async (request: HttpRequest, signal: AbortSignal, credential: ExecCredential | undefined): Promise<HttpAnswer> => {
    const headers: Record<string, string> = { ...(await headersFor(credential)), Accept: "application/json" }
    const body = request.body === undefined ? undefined : JSON.stringify(request.body)
    if (body !== undefined) headers["Content-Type"] = request.contentType ?? "application/json"
    const url = urlOf(request.path, request.query ?? {})
    const message = await sendRequest(url, { method: request.method, headers, body, agent: agentFor(credential), signal })
    const retryAfter = message.headers["retry-after"]
    return { status: message.statusCode ?? 0, body: parseJson(await textOf(message)), retryAfter }
  }

  const timeoutMillis = Duration.toMillis(options.requestTimeout)
  const timedOut = new RequestTimedOut({ message: `no answer within ${Duration.format(options.requestTimeout)}` })

  // A timer on the request's own abort signal rather than Effect.timeout, which races two
  // fibers per request; this runs for every request the process makes.
  const exchangeInTime = (request: HttpRequest, signal: AbortSignal, credential: ExecCredential | undefined): Promise<HttpAnswer> => {
    const controller = new AbortController()
    const interrupted = () => controller.abort(signal.reason)
    signal.addEventListener("abort", interrupted, { once: true })
    const timer = setTimeout(() => controller.abort(timedOut), timeoutMillis)
    return exchange(request, controller.signal, credential).finally(() => {
      clearTimeout(timer)
      signal.removeEventListener("abort", interrupted)
    })
  }

  /** One request through the rate limiter; the timeout starts once the limiter lets it go (waiting for a token is not the server's fault). */
  const sendOnce = (
    request: HttpRequest,
    target: RequestTarget,
    credential: ExecCredential | undefined
  ): Effect.Effect<HttpAnswer, Unavailable> =>
    Effect.andThen(
      options.limiter.take,
      Effect.tryPromise({
        try: (signal) => exchangeInTime(request, signal, credential),
        catch: (error) => (error === timedOut ? unavailableOf(target, timedOut.message) : noAnswerOf(target, error))
      })
    )

  /** With a plugin: a 401 replaces the credential the request was made with, and the request goes once more with the new one. */
  const authenticatedSend = (request: HttpRequest, target: RequestTarget): Effect.Effect<HttpAnswer, Unavailable | NoCredential> => {
    if (exec === undefined) return sendOnce(request, target, undefined)
    const credential = Effect.mapError(exec.current, (error) => new NoCredential({ error: noAnswerOf(target, error) }))
    return Effect.flatMap(credential, (seen) =>
      Effect.flatMap(sendOnce(request, target, seen), (answer) =>
        answer.status === 401
          ? exec.rejected(seen).pipe(
              Effect.andThen(credential),
              Effect.flatMap((fresh) => sendOnce(request, target, fresh))
            )
          : Effect.succeed(answer)
      )
    )
  }

  /** One attempt; an outcome the policy retries becomes a RetryWanted failure. */
  const attempt = (request: HttpRequest, target: RequestTarget): Effect.Effect<HttpAnswer, Unavailable | RetryWanted> =>
    authenticatedSend(request, target).pipe(
      Effect.matchEffect({
        onFailure: (error) => {
          if (error._tag === "NoCredential") return Effect.fail(error.error)
          const decision = decideOnNoAnswer(request.method, error.connection)
          return Effect.fail(decision._tag === "Done" ? error : new RetryWanted({ decision, outcome: Result.fail(error) }))
        },
        onSuccess: (answer) => {
          const decision = decideOnAnswer(request.method, answer.status, retryAfterOf(answer.retryAfter, answer.body))
          return decision._tag === "Done"
            ? Effect.succeed(answer)
            : Effect.fail(new RetryWanted({ decision, outcome: Result.succeed(answer) }))
        }
      })
    )

  const logRetry = (wanted: RetryWanted, target: RequestTarget) =>
    Effect.logDebug("retrying an API request").pipe(
      Effect.annotateLogs({
        request: `${target.verb} ${target.resource.kind}`,
        outcome: Result.isSuccess(wanted.outcome) ? `HTTP ${wanted.outcome.success.status}` : wanted.outcome.failure.message,
        retryAfter: wanted.decision._tag === "After" ? Duration.format(wanted.decision.delay) : "backoff"
      })
    )

  /**
   * The attempts after a first one that the policy wants tried again. The schedule's first step
   * sees that first outcome (its delay may be the server's Retry-After) without another request;
   * starting the schedule only here keeps its set-up off the path of requests answered at once.
   */
  const retried = (first: RetryWanted, request: HttpRequest, target: RequestTarget) => {
    let pending: RetryWanted | undefined = first
    const next = Effect.suspend(() => {
      const known = pending
      pending = undefined
      return known === undefined ? attempt(request, target) : Effect.fail(known)
    })
    return next.pipe(
      Effect.tapError((error) => (error._tag === "RetryWanted" ? logRetry(error, target) : Effect.void)),
      Effect.retry({ schedule: retrySchedule, while: (error) => error._tag === "RetryWanted", times: options.maxRetries ?? maxRetries }),
      // Out of retries: the last outcome stands.
      Effect.catchTag("RetryWanted", (wanted) =>
        Result.isSuccess(wanted.outcome) ? Effect.succeed(wanted.outcome.success) : Effect.fail(wanted.outcome.failure)
      )
    )
  }

  return {
    openWatch,
    send: (request, target) => attempt(request, target).pipe(Effect.catchTag("RetryWanted", (first) => retried(first, request, target)))
  }
})
