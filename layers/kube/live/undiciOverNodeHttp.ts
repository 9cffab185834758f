// What @kubernetes/client-node takes from undici (fetch, Agent, ProxyAgent), on node:http and
// node:https. build.ts gives it to client-node in undici's place in the bundles: undici (0.74 MB,
// evaluated at start) parses HTTP with llhttp in WebAssembly, whose tier-up runs V8's optimizing
// compiler; together 7-8 MiB of the daemon's idle RSS (docs/benchmarks.md, "Daemon overhead and
// memory"). client-node still decides everything about the connection (the kubeconfig's CA, client
// certificate, server name, proxy, credentials); this module only carries out its requests.
// The sources run on undici itself. test/layers/kube/live/undiciOverNodeHttp.test.ts uses this module as
// client-node does (requests, a watch, aborts, TLS, an HTTP proxy; not SOCKS) against the embedded
// API server; the system tests run the bundles' controller and daemon through it.
import { once } from "node:events"
import http from "node:http"
import https from "node:https"
import type { Socket } from "node:net"
import { Readable } from "node:stream"
import type { ConnectionOptions } from "node:tls"
import { HttpProxyAgent, HttpsProxyAgent } from "hpagent"

/** undici's connector: how client-node tunnels through a SOCKS proxy. */
interface ConnectTarget {
  readonly hostname: string
  readonly host: string
  readonly protocol: string
  readonly port: string
  readonly servername?: string
}
type Connector = (options: ConnectTarget, callback: (error: Error | null, socket: Socket | null) => void) => void

/** undici's `connect` options as client-node fills them: TLS settings plus TCP keep-alive. */
type ConnectOptions = ConnectionOptions & { readonly keepAlive?: boolean; readonly keepAliveInitialDelay?: number }

interface Pools {
  readonly http: http.Agent
  readonly https: https.Agent
}

const poolsOf = (options: ConnectOptions = {}): Pools => {
  const { keepAlive: _, keepAliveInitialDelay, ...tls } = options
  // keepAlive: reuse connections (undici does); keepAliveMsecs: TCP keep-alive, as client-node asks.
  const common = { keepAlive: true, ...(keepAliveInitialDelay === undefined ? {} : { keepAliveMsecs: keepAliveInitialDelay }) }
  return { http: new http.Agent(common), https: new https.Agent({ ...common, ...tls }) }
}

/** undici's Agent options as node:http(s) agents: TLS and keep-alive settings, or a connector (SOCKS). */
const makePools = (connect: ConnectOptions | Connector | undefined): Pools => {
  if (typeof connect !== "function") return poolsOf(connect)
  // Node's Agent takes a createConnection that answers through its callback, as undici's connector does.
  type NodeTarget = { host?: string | null; port?: number | string | null; servername?: string }
  const through = (protocol: string) => (target: NodeTarget, callback: (error: Error | null, socket: Socket) => void) => {
    const host = target.host ?? "localhost"
    const servername = target.servername ? { servername: target.servername } : {}
    const port = String(target.port ?? "")
    connect({ hostname: host, host, protocol, port, ...servername }, (error, socket) => callback(error, socket!))
    return undefined
  }
  const pools = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
  Object.assign(pools.http, { createConnection: through("http:") })
  Object.assign(pools.https, { createConnection: through("https:") })
  return pools
}

const inUse = (agent: http.Agent): ReadonlyArray<Socket> =>
  Object.values(agent.sockets).flatMap((sockets) => (sockets === undefined ? [] : sockets))

/**
 * Resolves once `agent` holds no connection: idle ones are closed now, busy ones as soon as their
 * request is done (a watch: when its stream ends), instead of going back to the pool.
 */
const drain = async (agent: http.Agent): Promise<void> => {
  // Node's Agent destroys a freed socket that keepSocketAlive refuses.
  agent.keepSocketAlive = () => false
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy()
  for (let busy = inUse(agent); busy.length > 0 || Object.keys(agent.requests).length > 0; busy = inUse(agent)) {
    // A request still waiting for its connection gets one (then closed when done): wait for it too.
    await Promise.race([Promise.all(busy.map((socket) => once(socket, "close"))), once(agent, "free")])
  }
}

/**
 * A connection pool with client-node's connection settings (undici's Agent). Its node:http(s)
 * agents are made at the first request: client-node builds an Agent alongside every request's
 * authentication, and transport.ts drops those unused in favour of one shared pool.
 */
export class Agent {
  #pools: Pools | undefined
  #closed = false
  readonly #connect: ConnectOptions | Connector | undefined

  constructor(options: { readonly connect?: ConnectOptions | Connector } = {}) {
    this.#connect = options.connect
  }

  protected makePools(): Pools {
    return makePools(this.#connect)
  }

  /** @internal the node:http(s) agent for a URL of this protocol; fails once the pool is closed, as undici's does. */
  agentFor(url: URL): http.Agent {
    if (this.#closed) throw new Error("the connection pool is closed")
    this.#pools ??= this.makePools()
    return url.protocol === "https:" ? this.#pools.https : this.#pools.http
  }

  /** Closes every connection at once: requests on them fail. */
  async destroy(): Promise<void> {
    this.#closed = true
    this.#pools?.http.destroy()
    this.#pools?.https.destroy()
  }

  /** As undici's close(): no new requests; the ones under way (watches too) finish, then their connections close. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#pools !== undefined) await Promise.all([drain(this.#pools.http), drain(this.#pools.https)])
  }
}

interface ProxyOptions {
  readonly uri: string
  readonly requestTls?: ConnectionOptions
  readonly connect?: ConnectOptions
}

/** Through an HTTP(S) proxy, with CONNECT for https targets (undici's ProxyAgent). */
export class ProxyAgent extends Agent {
  readonly #options: ProxyOptions

  constructor(options: ProxyOptions) {
    super()
    this.#options = options
  }

  protected override makePools(): Pools {
    // `connect` is the connection to the proxy (keep-alive only, from client-node); `requestTls` the target's TLS.
    const delay = this.#options.connect?.keepAliveInitialDelay
    const common = { keepAlive: true, proxy: this.#options.uri, ...(delay === undefined ? {} : { keepAliveMsecs: delay }) }
    return { http: new HttpProxyAgent(common), https: new HttpsProxyAgent({ ...common, ...this.#options.requestTls }) }
  }
}

const defaultAgent = new Agent()

export interface FetchInit {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Buffer | null
  readonly signal?: AbortSignal | null
  readonly dispatcher?: Agent | null
}

/** The part of a fetch Response client-node reads. */
export interface FetchResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: { forEach(f: (value: string, name: string) => void): void }
  readonly body: ReadableStream<Uint8Array>
  text(): Promise<string>
  buffer(): Promise<Buffer>
}

// Listeners rather than `for await`: the async iterator costs a promise and a microtask per chunk.
const collect = (stream: Readable): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.once("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    stream.once("error", reject)
    stream.once("close", () => {
      if (!stream.readableEnded) reject(stream.errored ?? new Error("the answer ended early"))
    })
  })

const responseOf = (message: http.IncomingMessage): FetchResponse => {
  let body: ReadableStream<Uint8Array> | undefined
  return {
    status: message.statusCode ?? 0,
    statusText: message.statusMessage ?? "",
    headers: {
      forEach: (f) => {
        for (const [name, value] of Object.entries(message.headers)) {
          if (value !== undefined) f(Array.isArray(value) ? value.join(", ") : value, name)
        }
      }
    },
    // A web stream only for whoever asks (client-node's Watch), and the same one each time.
    get body() {
      return (body ??= Readable.toWeb(message) as ReadableStream<Uint8Array>)
    },
    buffer: () => collect(message),
    text: async () => (await collect(message)).toString("utf8")
  }
}

/** One request; rejects when no answer came (refused, reset, aborted: the signal's reason, as fetch does). */
export const fetch = (input: string | URL, init: FetchInit = {}): Promise<FetchResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(String(input))
    const signal = init.signal ?? undefined
    if (signal?.aborted) return reject(signal.reason)
    const agent = (init.dispatcher ?? defaultAgent).agentFor(url)
    // Node frames a body on its own only for methods that usually carry one (not DELETE: a
    // DeleteOptions body went out unframed, and the server took it for the next request), so
    // every body goes with its length, as undici sends it.
    const body = init.body ?? undefined
    const framed = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: init.method ?? "GET",
        headers: { ...init.headers, ...framed },
        agent
      },
      (message) => {
        signal?.removeEventListener("abort", onAbort)
        // Aborting later ends the body with the signal's reason (a watch's idle timeout reads it).
        const onBodyAbort = () => message.destroy(signal!.reason)
        signal?.addEventListener("abort", onBodyAbort, { once: true })
        message.once("close", () => signal?.removeEventListener("abort", onBodyAbort))
        resolve(responseOf(message))
      }
    )
    const onAbort = () => {
      request.destroy(signal!.reason)
      reject(signal!.reason)
    }
    signal?.addEventListener("abort", onAbort, { once: true })
    request.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort)
      reject(error)
    })
    request.end(body)
  })
