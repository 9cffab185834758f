// The connections the live client makes (connectionPool.ts, httpRequest.ts), from kubeconfigs read
// by client-node: the cluster's CA and tls-server-name, insecure-skip-tls-verify, the headers
// client-node sets, proxy-url through an HTTP proxy (CONNECT) and a SOCKS5 proxy, connections kept
// alive, an exec plugin's client certificate, DELETE bodies, aborts, and a pool closed gracefully
// or cut. Against a TLS server with certificates openssl makes, the embedded API server, and small
// proxies written here.
import { mkdtempSync } from "node:fs"
import http from "node:http"
import https from "node:https"
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { KubeConfig } from "@kubernetes/client-node"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serveApi } from "../../../../harness/apiserver/http/server.ts"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { connectionSettingsOf, drain, makeAgent } from "../../../../layers/kube/live/connectionPool.ts"
import { sendRequest, textOf } from "../../../../layers/kube/live/httpRequest.ts"
import { TestPki } from "../../../support/testPki.ts"

const pki = new TestPki(mkdtempSync(join(tmpdir(), "preheat-connections-pki-")))
const clusterCa = pki.authority("cluster-ca")
const serverCertificate = pki.issue(clusterCa, "server", { commonName: "apiserver", usage: "serverAuth", altNames: ["DNS:apiserver.test"] })
const clientCa = pki.authority("client-ca")
const clientCertificate = pki.issue(clientCa, "client", { commonName: "plugin-user", usage: "clientAuth" })

const listen = async <S extends Server>(server: S): Promise<S & { readonly port: number }> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return Object.assign(server, { port: (server.address() as AddressInfo).port })
}
const close = (server: Server, sockets: ReadonlySet<Socket> = new Set()) =>
  new Promise<void>((resolve) => {
    if (server instanceof http.Server) server.closeAllConnections()
    for (const socket of sockets) socket.destroy()
    server.close(() => resolve())
  })

/** Counts the connections a server accepted. */
const counted = <S extends Server>(server: S): { readonly server: S; readonly connections: () => number } => {
  let connections = 0
  server.on("connection", () => connections++)
  return { server, connections: () => connections }
}

const configOf = (cluster: Record<string, unknown>, user: Record<string, unknown> = { token: "t0ken" }): KubeConfig => {
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: "c", skipTLSVerify: false, ...cluster }],
    users: [{ name: "u", ...user }],
    contexts: [{ name: "ctx", cluster: "c", user: "u" }],
    currentContext: "ctx"
  })
  return config
}

const caData = Buffer.from(clusterCa.certPem).toString("base64")

/** GET `path` with the settings' headers over `agent`: status and body. */
const get = async (
  agent: http.Agent,
  server: string,
  path: string,
  headers: Record<string, string> = {},
  signal = new AbortController().signal
) => {
  const message = await sendRequest(new URL(`${server}${path}`), { method: "GET", headers, agent, signal })
  return { status: message.statusCode, body: JSON.parse(await textOf(message)) as Record<string, unknown> }
}

let tls: ReturnType<typeof counted<https.Server>> & { readonly url: string }

beforeAll(async () => {
  const server = counted(
    https.createServer(
      {
        key: serverCertificate.keyPem,
        cert: serverCertificate.certPem,
        ca: clientCa.certPem,
        requestCert: true,
        rejectUnauthorized: false
      },
      (request, response) => {
        const socket = request.socket as TLSSocket
        const client = socket.authorized ? (socket.getPeerCertificate().subject?.CN ?? null) : null
        response.setHeader("content-type", "application/json")
        response.end(JSON.stringify({ path: request.url, headers: request.headers, client }))
      }
    )
  )
  const listening = await listen(server.server)
  tls = { ...server, url: `https://127.0.0.1:${listening.port}` }
}, 60_000)
afterAll(() => close(tls.server))

describe("TLS as the kubeconfig says", () => {
  it("trusts the cluster's CA for its tls-server-name, sends client-node's headers, and keeps one connection for successive requests", async () => {
    const settings = await connectionSettingsOf(
      configOf({ server: tls.url, caData, tlsServerName: "apiserver.test" }, { token: "t0ken", impersonateUser: "someone" })
    )
    const agent = makeAgent(settings)
    const before = tls.connections()
    for (let i = 0; i < 3; i++) {
      const { status, body } = await get(agent, tls.url, `/version/${i}`, { ...settings.headers })
      expect(status).toBe(200)
      expect(body["path"]).toBe(`/version/${i}`)
      expect(body["headers"]).toMatchObject({ authorization: "Bearer t0ken", "impersonate-user": "someone" })
    }
    expect(tls.connections() - before).toBe(1)
    agent.destroy()
  })

  it("refuses a server its CA did not sign, and one whose name does not match", async () => {
    const untrusted = makeAgent(await connectionSettingsOf(configOf({ server: tls.url, tlsServerName: "apiserver.test" })))
    await expect(get(untrusted, tls.url, "/version")).rejects.toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" })
    const misnamed = makeAgent(await connectionSettingsOf(configOf({ server: tls.url, caData, tlsServerName: "other.test" })))
    await expect(get(misnamed, tls.url, "/version")).rejects.toMatchObject({ code: "ERR_TLS_CERT_ALTNAME_INVALID" })
  })

  it("skips verification only where insecure-skip-tls-verify says so", async () => {
    const agent = makeAgent(await connectionSettingsOf(configOf({ server: tls.url, skipTLSVerify: true })))
    expect((await get(agent, tls.url, "/version")).status).toBe(200)
    agent.destroy()
  })

  it("basic credentials become an Authorization header; an http server needs insecure-skip-tls-verify, as in client-node", async () => {
    const settings = await connectionSettingsOf(configOf({ server: tls.url, caData }, { username: "ann", password: "pw" }))
    expect(settings.headers).toEqual({ Authorization: `Basic ${Buffer.from("ann:pw").toString("base64")}` })
    await expect(connectionSettingsOf(configOf({ server: "http://127.0.0.1:1" }))).rejects.toThrow(/HTTP protocol is not allowed/)
  })

  it("an exec plugin's client certificate goes on a pool of its own", async () => {
    const settings = await connectionSettingsOf(configOf({ server: tls.url, caData, tlsServerName: "apiserver.test" }, {}))
    const shared = makeAgent(settings)
    const withCertificate = makeAgent(settings, { cert: clientCertificate.certPem, key: clientCertificate.keyPem })
    expect((await get(shared, tls.url, "/")).body["client"]).toBeNull()
    expect((await get(withCertificate, tls.url, "/")).body["client"]).toBe("plugin-user")
    shared.destroy()
    withCertificate.destroy()
  })
})

describe("proxy-url", () => {
  it("http: each connection is a CONNECT tunnel through the proxy, kept alive", async () => {
    const tunnels: Array<string> = []
    const proxy = await listen(http.createServer((_, response) => response.writeHead(405).end()))
    proxy.on("connect", (request: http.IncomingMessage, client: Socket, head: Buffer) => {
      tunnels.push(request.url ?? "")
      const [host, port] = (request.url ?? "").split(":")
      const upstream = connect(Number(port), host!, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
        upstream.write(head)
        upstream.pipe(client).on("error", () => undefined)
        client.pipe(upstream).on("error", () => undefined)
      })
      upstream.on("error", () => client.destroy())
      client.on("error", () => upstream.destroy())
    })
    try {
      const proxyUrl = `http://127.0.0.1:${proxy.port}`
      const agent = makeAgent(await connectionSettingsOf(configOf({ server: tls.url, caData, tlsServerName: "apiserver.test", proxyUrl })))
      for (const path of ["/one", "/two"]) expect((await get(agent, tls.url, path)).body["path"]).toBe(path)
      expect(tunnels).toEqual([new URL(tls.url).host])
      agent.destroy()
    } finally {
      await close(proxy)
    }
  })

  it("socks5: through the SOCKS proxy, kept alive, with an exec plugin's client certificate too", async () => {
    const tunnels: Array<string> = []
    const sockets = new Set<Socket>()
    // RFC 1928, as much as a client connecting to an IPv4 address needs: no authentication, CONNECT.
    const proxy = await listen(
      createServer((client) => {
        sockets.add(client)
        client.once("data", () => {
          client.write(Buffer.from([5, 0]))
          client.once("data", (request: Buffer) => {
            const host = [...request.subarray(4, 8)].join(".")
            const port = request.readUInt16BE(8)
            tunnels.push(`${host}:${port}`)
            const upstream = connect(port, host, () => {
              client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]))
              upstream.pipe(client).on("error", () => undefined)
              client.pipe(upstream).on("error", () => undefined)
            })
            upstream.on("error", () => client.destroy())
            client.on("error", () => upstream.destroy())
          })
        })
      })
    )
    try {
      const proxyUrl = `socks5://127.0.0.1:${proxy.port}`
      const settings = await connectionSettingsOf(configOf({ server: tls.url, caData, tlsServerName: "apiserver.test", proxyUrl }))
      const agent = makeAgent(settings)
      for (const path of ["/one", "/two"]) expect((await get(agent, tls.url, path, { ...settings.headers })).body["path"]).toBe(path)
      expect(tunnels).toEqual([new URL(tls.url).host])
      const withCertificate = makeAgent(settings, { cert: clientCertificate.certPem, key: clientCertificate.keyPem })
      expect((await get(withCertificate, tls.url, "/")).body["client"]).toBe("plugin-user")
      agent.destroy()
      withCertificate.destroy()
    } finally {
      await close(proxy, sockets)
    }
  })
})

describe("requests", () => {
  let scope: Scope.Closeable
  let api = ""
  const nodeImages = "/apis/apps.kruise.io/v1alpha1/nodeimages"
  const headers = { Authorization: "Bearer api-token", Accept: "application/json", "Content-Type": "application/json" }

  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    api = (await Effect.runPromise(serveApi({ token: "api-token" }).pipe(Effect.provide(InMemoryKubeApi.layer), Scope.provide(scope)))).url
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const send = async (agent: http.Agent, method: string, path: string, body?: unknown) => {
    const message = await sendRequest(new URL(`${api}${path}`), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      agent,
      signal: new AbortController().signal
    })
    return { status: message.statusCode, body: JSON.parse(await textOf(message)) }
  }

  it("sends a DELETE's body framed, so its preconditions arrive and the connection stays usable", async () => {
    // Node frames a body only for methods that usually carry one: a DELETE's went out with no
    // Content-Length, so the server read none and took the JSON for the next request (HTTP 400).
    const agent = new http.Agent({ keepAlive: true })
    const created = await send(agent, "POST", nodeImages, {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "NodeImage",
      metadata: { name: "n-delete" },
      spec: {}
    })
    const preconditions = (uid: string) => ({ apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid } })
    const refused = await send(agent, "DELETE", `${nodeImages}/n-delete`, preconditions("another-uid"))
    expect(refused.status).toBe(409)
    expect(refused.body.message).toContain("Precondition failed: UID in precondition: another-uid")
    const deleted = await send(agent, "DELETE", `${nodeImages}/n-delete`, preconditions(created.body.metadata.uid))
    expect(deleted.status).toBe(200)
    expect((await send(agent, "GET", `${nodeImages}/n-delete`)).status).toBe(404)
    agent.destroy()
  })

  it("rejects when nothing answers, and with the signal's reason when aborted, before or after the answer began", async () => {
    const agent = new http.Agent({ keepAlive: true })
    const reason = new Error("given up")
    await expect(
      sendRequest(new URL("http://127.0.0.1:1/"), { method: "GET", headers, agent, signal: new AbortController().signal })
    ).rejects.toThrow(/ECONNREFUSED/)
    await expect(
      sendRequest(new URL(`${api}${nodeImages}`), { method: "GET", headers, agent, signal: AbortSignal.abort(reason) })
    ).rejects.toBe(reason)
    const controller = new AbortController()
    const watch = await sendRequest(new URL(`${api}${nodeImages}?watch=true`), { method: "GET", headers, agent, signal: controller.signal })
    expect(watch.statusCode).toBe(200)
    const body = textOf(watch)
    controller.abort(reason)
    await expect(body).rejects.toBe(reason)
    agent.destroy()
  })
})

describe("a pool closed gracefully (drain) or cut (destroy)", () => {
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 1200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
    expect(done()).toBe(true)
  }

  it("closes idle connections at once, lets a request under way finish, then closes its connection", async () => {
    const held: Array<() => void> = []
    let open = 0
    const server = await listen(
      http.createServer((request, response) => {
        const answer = () => response.end(JSON.stringify({ path: request.url }))
        if (request.url === "/slow") held.push(answer)
        else answer()
      })
    )
    server.on("connection", (socket: Socket) => {
      open++
      socket.once("close", () => open--)
    })
    const url = `http://127.0.0.1:${server.port}`
    try {
      const agent = new http.Agent({ keepAlive: true })
      const slow = get(agent, url, "/slow")
      await until(() => held.length === 1)
      expect((await get(agent, url, "/fast")).body).toEqual({ path: "/fast" })
      expect(open).toBe(2)
      let drained = false
      void drain(agent).then(() => {
        drained = true
      })
      await until(() => open === 1)
      expect(drained).toBe(false)
      held[0]!()
      expect((await slow).body).toEqual({ path: "/slow" })
      await until(() => open === 0 && drained)
    } finally {
      await close(server)
    }
  })

  it("destroy cuts what drain waits for: a request whose answer never began loses its connection", async () => {
    let arrived = false
    let open = 0
    // A server that never begins its answer, as a proxy holding back a watch's headers.
    const server = await listen(
      http.createServer(() => {
        arrived = true
      })
    )
    server.on("connection", (socket: Socket) => {
      open++
      socket.once("close", () => open--)
    })
    try {
      const agent = new http.Agent({ keepAlive: true })
      const unanswered = get(agent, `http://127.0.0.1:${server.port}`, "/watch")
      await until(() => arrived)
      let drained = false
      void drain(agent).then(() => {
        drained = true
      })
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect({ open, drained }).toEqual({ open: 1, drained: false })
      agent.destroy()
      await expect(unanswered).rejects.toThrow()
      await until(() => open === 0 && drained)
    } finally {
      await close(server)
    }
  })
})
