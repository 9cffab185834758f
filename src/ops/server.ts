/**
 * The operations endpoint of both roles: /healthz, /readyz and /metrics.
 *
 * Built on node:http rather than effect/http + NodeHttpServer: three fixed GET routes with no
 * request bodies need no router, and a bare server keeps the probe path short and independent of
 * the HTTP stack's middleware (request logging, tracing) so probes and scrapes stay cheap. It runs
 * unchanged on Node, in the single executable and on Deno's node:http.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Cause, Data, Effect, FiberSet } from "effect"
import type { Scope } from "effect"
import { Metrics } from "./metrics.ts"

export interface HealthCheck {
  readonly name: string
  readonly ok: boolean
  /** Why the check fails (or a note when it passes). */
  readonly message?: string
}

export type HealthReport = ReadonlyArray<HealthCheck>

export interface OpsServerOptions<R> {
  /** 0 picks a free port; the bound one is returned. */
  readonly port: number
  readonly host: string
  /** Liveness: failing makes the kubelet restart the container. */
  readonly health: Effect.Effect<HealthReport, unknown, R>
  /** Readiness: failing only takes the pod out of service. */
  readonly ready: Effect.Effect<HealthReport, unknown, R>
}

export class OpsServerError extends Data.TaggedError("OpsServerError")<{
  readonly message: string
  readonly cause: unknown
}> {}

interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

const text = (status: number, body: string, headers: Readonly<Record<string, string>> = {}): Reply => ({
  status,
  headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", ...headers },
  body
})

// A probe that hangs would otherwise pile up one fiber per kubelet retry.
const checkTimeout = "10 seconds"

/** A check that cannot even produce a report fails as a whole, with its cause as the message. */
const runChecks = <R>(checks: Effect.Effect<HealthReport, unknown, R>): Effect.Effect<HealthReport, never, R> =>
  checks.pipe(
    Effect.timeoutOption(checkTimeout),
    Effect.map((report) => (report._tag === "Some" ? report.value : [{ name: "checks", ok: false, message: "timed out" }])),
    Effect.catchCause((cause) => Effect.succeed([{ name: "checks", ok: false, message: String(Cause.squash(cause)) }]))
  )

/**
 * kube-apiserver's format: "ok" when everything passes; otherwise (or with ?verbose) one line
 * per check, `[+]name ok` or `[-]name failed: why`, then `<endpoint> check passed|failed`.
 */
export const renderHealth = (endpoint: string, report: HealthReport, verbose: boolean): Reply => {
  const healthy = report.every((check) => check.ok)
  if (healthy && !verbose) return text(200, "ok")
  const lines = report
    .filter((check) => verbose || !check.ok)
    .map((check) => (check.ok ? `[+]${check.name} ok` : `[-]${check.name} failed: ${check.message ?? "reason unknown"}`))
  lines.push(`${endpoint} check ${healthy ? "passed" : "failed"}`)
  return text(healthy ? 200 : 503, `${lines.join("\n")}\n`)
}

const route = <R>(options: OpsServerOptions<R>, metrics: Metrics["Service"], method: string, url: URL): Effect.Effect<Reply, never, R> => {
  const probes: Record<string, Effect.Effect<HealthReport, unknown, R>> = {
    "/healthz": options.health,
    "/readyz": options.ready
  }
  const probe = probes[url.pathname]
  const known = probe !== undefined || url.pathname === "/metrics"
  if (!known) return Effect.succeed(text(404, "404 page not found\n"))
  if (method !== "GET" && method !== "HEAD") return Effect.succeed(text(405, "method not allowed\n", { allow: "GET, HEAD" }))
  if (probe === undefined) {
    return Effect.map(metrics.render, ({ body, contentType }) => ({ status: 200, headers: { "content-type": contentType }, body }))
  }
  const verbose = url.searchParams.has("verbose")
  return Effect.map(runChecks(probe), (report) => renderHealth(url.pathname.slice(1), report, verbose))
}

const send = (request: http.IncomingMessage, response: http.ServerResponse, reply: Reply): void => {
  if (response.destroyed || response.headersSent) return
  response.writeHead(reply.status, { ...reply.headers, "content-length": Buffer.byteLength(reply.body) })
  response.end(request.method === "HEAD" ? undefined : reply.body)
}

/**
 * Serves the ops endpoint until the scope closes; then it stops listening, drops open
 * (keep-alive) connections and interrupts checks still running.
 */
export const serveOps = <R = never>(
  options: OpsServerOptions<R>
): Effect.Effect<{ readonly port: number }, OpsServerError, Scope.Scope | Metrics | R> =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const run = yield* FiberSet.makeRuntimePromise<R>()

    const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const url = new URL(request.url ?? "/", "http://ops.local")
      run(route(options, metrics, request.method ?? "GET", url)).then(
        (reply) => send(request, response, reply),
        // Interrupted because the server is shutting down, or a defect: never leave the client hanging.
        () => send(request, response, text(503, "shutting down\n"))
      )
    }

    const server = yield* Effect.acquireRelease(
      Effect.callback<http.Server, OpsServerError>((resume) => {
        const server = http.createServer(handle)
        const onError = (cause: Error) =>
          resume(Effect.fail(new OpsServerError({ message: `cannot listen on ${options.host}:${options.port}: ${cause.message}`, cause })))
        server.once("error", onError)
        server.listen(options.port, options.host, () => {
          server.off("error", onError)
          // Later server errors (e.g. accept failing under fd exhaustion) must not crash the process.
          server.on("error", (cause) => void run(Effect.logWarning("ops server error", cause)).catch(() => undefined))
          resume(Effect.succeed(server))
        })
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    return { port: (server.address() as AddressInfo).port }
  })
