/**
 * A fault-injecting HTTP proxy for the whole-system tests (issue 13): it sits between the API server
 * and its clients (controller, daemons) and, while a fault is set, answers or breaks requests as a
 * real API server under load or upgrade does: 429 with Retry-After (API Priority and Fairness), 500
 * and 503 with a meta/v1 Status body, latency, connections reset mid-response, watch streams ended
 * early or mid-event, and fully down (connections refused). It counts what passes through: requests,
 * lists (relists), watches, and retries (a request repeating one that a fault answered).
 *
 * node:http rather than a proxy library: every fault needs a hand on the raw response (half a body,
 * half a watch event, a destroyed socket), which the libraries hide behind their own piping.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { ApiFailure, statusBody } from "../../harness/apiserver/http/apiStatus.ts"

export type Fault =
  /** 429 TooManyRequests with `Retry-After: seconds`, as API Priority and Fairness rejects. */
  | { readonly kind: "throttle"; readonly retryAfterSeconds: number }
  /** 500 InternalError or 503 ServiceUnavailable with a Status body (no Retry-After). */
  | { readonly kind: "error"; readonly code: 500 | 503 }
  /** Forwarded after a delay drawn uniformly from [minMs, maxMs]. */
  | { readonly kind: "latency"; readonly minMs: number; readonly maxMs: number }
  /** Forwarded, but the connection is destroyed after the headers and half of the body. */
  | { readonly kind: "reset" }
  /** Watches only: after `afterEvents` events the stream ends cleanly (early) or inside the next event. */
  | { readonly kind: "cutWatch"; readonly afterEvents: number; readonly midEvent: boolean }

/** Which requests a rule applies to, and to what share of them (deterministic: every 1/share-th). */
export interface Rule {
  readonly fault: Fault
  readonly match?: (request: RequestInfo) => boolean
  /** 1 (the default) for every matching request, 0.5 for every second one, ... */
  readonly share?: number
}

export interface RequestInfo {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly userAgent: string
  readonly watch: boolean
  /** A GET of a collection that is not a watch. */
  readonly list: boolean
}

export const isWrite = (request: RequestInfo) => request.method !== "GET" && request.method !== "HEAD"

export interface ProxyCounts {
  requests: number
  lists: number
  watches: number
  /** Watches that named the resourceVersion to resume from (not empty, not "0": no fresh state). */
  resumedWatches: number
  /** Requests repeating (same client, method and URL) one a fault answered. */
  retries: number
  /** Requests answered or broken by a fault, by fault kind. */
  faulted: Record<string, number>
  /** Retries of a throttled request that came sooner than its Retry-After. */
  earlyRetries: Array<{ readonly key: string; readonly afterMs: number; readonly askedMs: number }>
}

const emptyCounts = (): ProxyCounts => ({ requests: 0, lists: 0, watches: 0, resumedWatches: 0, retries: 0, faulted: {}, earlyRetries: [] })

/** A metav1.Status body as the embedded API server words its own failures. */
const failureBody = (code: number, reason: string, message: string, retryAfterSeconds?: number): string =>
  JSON.stringify(
    statusBody(
      new ApiFailure({
        code,
        reason,
        message,
        ...(retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } })
      })
    )
  )

/** A collection path: /api/v1/nodes, /apis/g/v/namespaces/ns/things; not an object or a subresource. */
const isCollection = (path: string): boolean => {
  const parts = path.split("/").filter((p) => p !== "")
  const rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : undefined
  if (rest === undefined) return false
  return rest[0] === "namespaces" && rest.length >= 3 ? rest.length === 3 : rest.length === 1
}

export const requestInfo = (request: http.IncomingMessage): RequestInfo => {
  const url = new URL(request.url ?? "/", "http://proxy.local")
  const method = request.method ?? "GET"
  const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1"
  return {
    method,
    path: url.pathname,
    query: url.searchParams,
    userAgent: String(request.headers["user-agent"] ?? ""),
    watch,
    list: method === "GET" && !watch && isCollection(url.pathname)
  }
}

export class FaultProxy {
  counts: ProxyCounts = emptyCounts()
  private rules: Array<Rule & { seen: number }> = []
  private readonly sockets = new Set<Socket>()
  /** Watch responses being streamed, so that a watch fault reaches watches opened before it. */
  private readonly openWatches = new Set<http.ServerResponse>()
  /** One listener per client (its own port), so that requests are told apart by who sent them. */
  private readonly listeners = new Map<string, { server: http.Server | undefined; port: number }>()
  /** Requests a fault answered, by client+method+URL: when, and how long the client was asked to wait. */
  private readonly faulted = new Map<string, { readonly at: number; readonly waitMs: number }>()
  private readonly upstream: URL

  private constructor(upstream: URL) {
    this.upstream = upstream
  }

  /** A proxy to `upstream` (http://host:port), its first client ("default") on a free port of 127.0.0.1. */
  static async start(upstream: string): Promise<FaultProxy> {
    const proxy = new FaultProxy(new URL(upstream))
    await proxy.listen("default", 0)
    return proxy
  }

  get port(): number {
    return this.listeners.get("default")?.port ?? 0
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** The address for one client: the same faults, but its retries are judged on its own requests. */
  async urlFor(client: string): Promise<string> {
    if (!this.listeners.has(client)) await this.listen(client, 0)
    return `http://127.0.0.1:${this.listeners.get(client)!.port}`
  }

  /**
   * Replaces the active faults (none: everything passes). Watch faults apply to watches opened from
   * now on, so the open ones are ended first (cleanly, as a server ends a watch at its timeout).
   */
  set(...rules: ReadonlyArray<Rule>): void {
    this.rules = rules.map((rule) => ({ ...rule, seen: 0 }))
    if (rules.some((rule) => rule.fault.kind === "cutWatch")) {
      for (const watch of this.openWatches) watch.end()
    }
  }

  clear(): void {
    this.rules = []
  }

  resetCounts(): ProxyCounts {
    const counts = this.counts
    this.counts = emptyCounts()
    return counts
  }

  /** Fully down: open connections (watches too) are destroyed and new ones refused, until up(). */
  async down(): Promise<void> {
    const closing = [...this.listeners.values()].map((listener) => {
      const server = listener.server
      listener.server = undefined
      return server === undefined ? Promise.resolve() : new Promise<void>((done) => server.close(() => done()))
    })
    for (const socket of this.sockets) socket.destroy()
    await Promise.all(closing)
  }

  /** Listens again, every client on its port. */
  async up(): Promise<void> {
    for (const [client, listener] of this.listeners) if (listener.server === undefined) await this.listen(client, listener.port)
  }

  async stop(): Promise<void> {
    await this.down()
  }

  private listen(client: string, port: number): Promise<void> {
    return new Promise((done, fail) => {
      const server = http.createServer({ keepAliveTimeout: 30_000 }, (request, response) => this.handle(client, request, response))
      server.on("connection", (socket) => {
        this.sockets.add(socket)
        socket.once("close", () => this.sockets.delete(socket))
      })
      server.once("error", fail)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", fail)
        this.listeners.set(client, { server, port: (server.address() as AddressInfo).port })
        done()
      })
    })
  }

  /** The first rule that matches and whose share picks this request. */
  private faultFor(info: RequestInfo): Fault | undefined {
    for (const rule of this.rules) {
      if (rule.match !== undefined && !rule.match(info)) continue
      if (rule.fault.kind === "cutWatch" && !info.watch) continue
      const share = rule.share ?? 1
      rule.seen++
      if (Math.floor(rule.seen * share) > Math.floor((rule.seen - 1) * share)) return rule.fault
    }
    return undefined
  }

  private count(info: RequestInfo, key: string): void {
    const counts = this.counts
    counts.requests++
    if (info.list) counts.lists++
    if (info.watch) counts.watches++
    const resumeFrom = info.query.get("resourceVersion") ?? ""
    if (info.watch && resumeFrom !== "" && resumeFrom !== "0") counts.resumedWatches++
    const earlier = this.faulted.get(key)
    if (earlier === undefined) return
    this.faulted.delete(key)
    counts.retries++
    const afterMs = Date.now() - earlier.at
    // 50 ms of slack for timer granularity in the client.
    if (afterMs + 50 < earlier.waitMs) counts.earlyRetries.push({ key, afterMs, askedMs: earlier.waitMs })
  }

  private noteFault(kind: string, key: string, waitMs = 0): void {
    this.counts.faulted[kind] = (this.counts.faulted[kind] ?? 0) + 1
    this.faulted.set(key, { at: Date.now(), waitMs })
  }

  private handle(client: string, request: http.IncomingMessage, response: http.ServerResponse): void {
    const info = requestInfo(request)
    // A watch resumes from a newer resourceVersion than it was refused at: its path is what repeats.
    const key = `${client} ${info.userAgent} ${info.method} ${info.watch ? info.path : request.url}`
    this.count(info, key)
    const fault = this.faultFor(info)
    if (fault?.kind === "throttle") {
      this.noteFault("throttle", key, fault.retryAfterSeconds * 1000)
      request.resume()
      response.writeHead(429, { "content-type": "application/json", "retry-after": String(fault.retryAfterSeconds) })
      response.end(failureBody(429, "TooManyRequests", "Too many requests, please try again later.", fault.retryAfterSeconds))
      return
    }
    if (fault?.kind === "error") {
      this.noteFault(`error${fault.code}`, key)
      request.resume()
      const [reason, message] =
        fault.code === 500
          ? ["InternalError", "Internal error occurred: injected by the fault proxy"]
          : ["ServiceUnavailable", "the server is currently unable to handle the request"]
      response.writeHead(fault.code, { "content-type": "application/json" })
      response.end(failureBody(fault.code, reason, message))
      return
    }
    const delay = fault?.kind === "latency" ? fault.minMs + Math.random() * (fault.maxMs - fault.minMs) : 0
    if (fault !== undefined && fault.kind !== "latency") this.noteFault(fault.kind, key)
    else if (fault?.kind === "latency") this.counts.faulted["latency"] = (this.counts.faulted["latency"] ?? 0) + 1
    const forward = () => this.forward(request, response, fault)
    if (delay > 0) setTimeout(forward, delay)
    else forward()
  }

  private forward(request: http.IncomingMessage, response: http.ServerResponse, fault: Fault | undefined): void {
    const upstream = http.request(
      {
        host: this.upstream.hostname,
        port: this.upstream.port,
        method: request.method,
        path: request.url,
        headers: request.headers
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        if (requestInfo(request).watch) {
          this.openWatches.add(response)
          response.once("close", () => this.openWatches.delete(response))
        }
        if (fault?.kind === "reset") return this.resetMidway(answer, response)
        if (fault?.kind === "cutWatch") return this.cutWatch(answer, response, fault)
        answer.pipe(response)
      }
    )
    upstream.on("error", () => response.destroy())
    response.on("close", () => upstream.destroy())
    request.pipe(upstream)
  }

  /** Headers and half of the body (or of the first chunk, for streams), then the connection dies. */
  private resetMidway(answer: http.IncomingMessage, response: http.ServerResponse): void {
    const declared = Number(answer.headers["content-length"] ?? 0)
    let sent = 0
    answer.on("data", (chunk: Buffer) => {
      const room = declared > 0 ? Math.max(0, Math.floor(declared / 2) - sent) : Math.floor(chunk.length / 2)
      response.write(chunk.subarray(0, Math.min(room, chunk.length)))
      sent += chunk.length
      if (declared === 0 || sent >= declared / 2) {
        answer.destroy()
        response.flushHeaders()
        setImmediate(() => response.socket?.destroy())
      }
    })
  }

  /** Passes `afterEvents` whole events, then ends the response, or sends half the next event and resets. */
  private cutWatch(answer: http.IncomingMessage, response: http.ServerResponse, fault: Extract<Fault, { kind: "cutWatch" }>): void {
    if (answer.statusCode !== 200) return void answer.pipe(response)
    response.flushHeaders()
    let events = 0
    let buffer = ""
    const cut = (partial: string) => {
      answer.destroy()
      if (fault.midEvent) {
        response.write(partial.slice(0, Math.max(1, Math.floor(partial.length / 2))))
        setImmediate(() => response.socket?.destroy())
      } else {
        response.end()
      }
    }
    answer.setEncoding("utf8")
    answer.on("data", (text: string) => {
      buffer += text
      for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
        const line = buffer.slice(0, newline + 1)
        buffer = buffer.slice(newline + 1)
        if (events === fault.afterEvents) return cut(line)
        response.write(line)
        events++
      }
    })
    answer.on("end", () => response.end())
  }
}
