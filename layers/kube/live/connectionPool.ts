// The connections to the API server: one keep-alive node:http(s) agent with the TLS settings
// client-node reads from the kubeconfig (applyToHTTPSOptions: CA, client certificate, server name,
// skip-verify), through the cluster's proxy-url if it has one. client-node's own agent for those
// settings is not kept alive (a connection per request), and its fetch is undici, which the
// bundles leave out (docs/benchmarks.md, "Issue 38: the live client").
import http from "node:http"
import https from "node:https"
import type { Socket } from "node:net"
import type { KubeConfig } from "@kubernetes/client-node"
import { HttpProxyAgent, HttpsProxyAgent } from "hpagent"
import { SocksProxyAgent } from "socks-proxy-agent"

/** What the kubeconfig says about the connection and the headers every request carries. */
export interface ConnectionSettings {
  readonly server: URL
  readonly tls: Readonly<Pick<https.AgentOptions, "ca" | "cert" | "key" | "servername" | "rejectUnauthorized">>
  readonly proxyUrl: string | undefined
  /** Authorization (a token, an auth provider's, basic) and impersonation, as client-node sets them. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The settings of `config`'s current cluster and user, as client-node applies them to node:https
 * options (its authenticators run: an OIDC token is refreshed). Fails as client-node does, for
 * an http:// server without insecure-skip-tls-verify.
 */
export const connectionSettingsOf = async (config: KubeConfig): Promise<ConnectionSettings> => {
  const options: https.RequestOptions = {}
  await config.applyToHTTPSOptions(options)
  const given = Object.entries(options.headers ?? {}).map(([name, value]) => [name, String(value)] as const)
  const basic = options.auth ? [["Authorization", `Basic ${Buffer.from(options.auth).toString("base64")}`] as const] : []
  const { ca, cert, key, servername, rejectUnauthorized } = options
  const proxyUrl = config.getCurrentCluster()?.proxyUrl || undefined
  const tls = Object.fromEntries(
    Object.entries({ ca, cert, key, servername, rejectUnauthorized }).filter(([, value]) => value !== undefined)
  )
  return {
    server: new URL(config.getCurrentCluster()?.server ?? ""),
    tls,
    proxyUrl,
    // A token given after basic credentials wins, as in client-node.
    headers: Object.fromEntries([...basic, ...given])
  }
}

// TCP keep-alive probes after 30 s idle, as client-go and client-node ask: under the 60 s after
// which cloud load balancers drop idle connections.
const keepAliveMsecs = 30_000

/** A keep-alive pool for `settings`, with `certificate` (an exec plugin's) as its client certificate if given. */
export const makeAgent = (settings: ConnectionSettings, certificate?: { readonly cert: string; readonly key: string }): http.Agent => {
  const tls = { ...settings.tls, ...certificate }
  const common = { keepAlive: true, keepAliveMsecs }
  const secure = settings.server.protocol === "https:"
  const proxy = settings.proxyUrl
  // socks-proxy-agent (as client-node uses it; hpagent has none), kept alive and with an exec plugin's certificate.
  if (proxy?.startsWith("socks")) return new SocksProxyAgent(proxy, { ...common, ...tls })
  if (proxy !== undefined) return secure ? new HttpsProxyAgent({ ...common, ...tls, proxy }) : new HttpProxyAgent({ ...common, proxy })
  return secure ? new https.Agent({ ...common, ...tls }) : new http.Agent(common)
}

const inUse = (agent: http.Agent): ReadonlyArray<Socket> =>
  Object.values(agent.sockets).flatMap((sockets) => (sockets === undefined ? [] : sockets))

/**
 * Resolves once `agent` holds no connection: idle ones are closed now, busy ones as soon as their
 * request is done (a watch: when its answer ends) instead of going back to the pool.
 */
export const drain = async (agent: http.Agent): Promise<void> => {
  // Node's Agent destroys a freed socket that keepSocketAlive refuses.
  agent.keepSocketAlive = () => false
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy()
  // Not events.once: it rejects when the socket errs on its way to closing (a watch aborted).
  for (let busy = inUse(agent); busy.length > 0; busy = inUse(agent)) {
    await Promise.all(busy.map((socket) => new Promise((resolve) => socket.once("close", resolve))))
  }
}
