// One request to the API server through client-node's own fetch and authentication. Every request
// asks the KubeConfig for its headers (OIDC refreshes there; token files are read in tokenFile.ts), but all share one
// connection pool: client-node would build a new undici Agent, hence a new TCP and TLS connection,
// for every request whose cluster has TLS settings (any in-cluster config). An exec credential
// plugin is run here instead of by client-node (execCredentials/): cached until it expires, one run
// for all requests waiting, replaced after a 401 (the request then goes once more), and its client
// certificates used for new connections as soon as it hands out new ones (certificatePools.ts).
import { IsomorphicFetchHttpLibrary, RequestContext } from "@kubernetes/client-node"
import type { HttpMethod, KubeConfig } from "@kubernetes/client-node"
import { Data, Duration, Effect, Result, Schedule } from "effect"
import type { Scope } from "effect"
import type { Unavailable } from "../../../src/kube/errors.ts"
import { type Dispatcher, makeCertificatePools } from "./certificatePools.ts"
import { type ExecAuthenticationOptions, makeExecAuthentication, withoutExecPlugin } from "./execCredentials/execAuthentication.ts"
import { hasExecSection } from "./execCredentials/execConfig.ts"
import type { ExecCredential } from "./execCredentials/execCredential.ts"
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
  /** What one watch request authenticates with; see WatchAuthentication. */
  readonly watchAuthentication: () => WatchAuthentication
}

/**
 * The KubeConfig as client-node's Watch should see it for one watch request: the same credentials,
 * User-Agent and connection pool as `send`'s.
 */
export interface WatchAuthentication {
  readonly config: KubeConfig
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

/** The connection pool client-node configures for this cluster and user, closed with the scope. */
const sharedDispatcher = (config: KubeConfig, server: string): Effect.Effect<Dispatcher | undefined, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const probe = new RequestContext(server, "GET")
        await config.applySecurityAuthentication(probe)
        return probe.getDispatcher()
      },
      catch: (error) => (error instanceof Error ? error : new Error(String(error)))
    }),
    (dispatcher) => (dispatcher === undefined ? Effect.void : Effect.promise(() => dispatcher.destroy().catch(() => undefined)))
  )

export const makeTransport = Effect.fnUntraced(function* (
  config: KubeConfig,
  options: TransportOptions
): Effect.fn.Return<Transport, Error, Scope.Scope> {
  const server = config.getCurrentCluster()?.server ?? ""
  const exec = yield* makeExecAuthentication(config, options)
  // client-node applies everything but the plugin and the token file: CA, server name, proxy,
  // impersonation. It would also run a plugin that client-go ignores for a user with a token or
  // certificate of its own.
  const tokenPath = tokenFileOf(config.getCurrentUser())
  const tokenFile = tokenPath === undefined ? undefined : yield* makeTokenFile(tokenPath)
  const base = withoutTokenFileProvider(hasExecSection(config.getCurrentUser()) ? withoutExecPlugin(config) : config)
  const dispatcher = yield* sharedDispatcher(base, server)
  const pools = exec === undefined ? undefined : yield* makeCertificatePools(base, server, dispatcher, options.requestTimeout)
  const library = new IsomorphicFetchHttpLibrary()
  // Watches authenticate from client-node's Watch, outside any fiber: they run the cache's effects with these services (its clock).
  const runPromise = Effect.runPromiseWith(yield* Effect.context<never>())

  // Fresh headers every time (OIDC refreshes there); the dispatcher client-node builds alongside is
  // dropped unused, as it would open connections of its own.
  const authenticate = async (context: RequestContext, credential: ExecCredential | undefined): Promise<void> => {
    await base.applySecurityAuthentication(context)
    if (tokenFile !== undefined) context.setHeaderParam("Authorization", `Bearer ${tokenFile.token()}`)
    const pool = credential === undefined || pools === undefined ? dispatcher : await pools.dispatcherFor(credential)
    if (pool !== undefined) context.setDispatcher(pool)
    if (credential?.token !== undefined) context.setHeaderParam("Authorization", `Bearer ${credential.token}`)
    context.setHeaderParam("User-Agent", options.userAgent)
  }

  // Watch calls only getCurrentCluster and applySecurityAuthentication on its config.
  const watchConfig: KubeConfig = Object.create(config)
  watchConfig.applySecurityAuthentication = (context) => authenticate(context, undefined)

  const watchAuthentication = (): WatchAuthentication => {
    if (exec === undefined || pools === undefined)
      return { config: watchConfig, rejected: () => undefined, onRetired: () => () => undefined }
    let seen: ExecCredential | undefined
    const perWatch: KubeConfig = Object.create(config)
    perWatch.applySecurityAuthentication = async (context) => {
      seen = await runPromise(exec.current)
      await authenticate(context, seen)
    }
    return {
      config: perWatch,
      rejected: () => (seen === undefined ? undefined : Effect.runSync(exec.rejected(seen))),
      onRetired: (end) => pools.onRetired(() => seen, end)
    }
  }

  const exchange = async (request: HttpRequest, signal: AbortSignal, credential: ExecCredential | undefined): Promise<HttpAnswer> => {
    const context = new RequestContext(`${server}${request.path}`, request.method)
    for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) context.setQueryParam(key, value)
    await authenticate(context, credential)
    context.setHeaderParam("Accept", "application/json")
    if (request.body !== undefined) {
      context.setHeaderParam("Content-Type", request.contentType ?? "application/json")
      context.setBody(JSON.stringify(request.body))
    }
    context.setSignal(signal)
    const response = await library.send(context).toPromise()
    return { status: response.httpStatusCode, body: parseJson(await response.body.text()), retryAfter: response.headers["retry-after"] }
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
    watchAuthentication,
    send: (request, target) => attempt(request, target).pipe(Effect.catchTag("RetryWanted", (first) => retried(first, request, target)))
  }
})
