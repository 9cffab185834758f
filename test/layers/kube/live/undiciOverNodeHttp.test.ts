// The stand-in for undici that the bundles give client-node (layers/kube/live/undiciOverNodeHttp.ts),
// used as client-node uses undici: requests with its headers and dispatcher, a watch read as
// client-node's Watch reads it (Readable.fromWeb, then lines), aborts, and TLS settings in the
// shape client-node's KubeConfig builds them; against the embedded API server and a TLS server
// with certificates openssl makes (test/support/testPki.ts).
import { mkdtempSync } from "node:fs"
import http from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Readable } from "node:stream"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { serveApi } from "../../../../harness/apiserver/http/server.ts"
import { Agent, fetch, ProxyAgent } from "../../../../layers/kube/live/undiciOverNodeHttp.ts"
import { eventually } from "../../../support/eventually.ts"
import { type LocalServer, listenLocally } from "../../../support/localServer.ts"
import { TestPki } from "../../../support/testPki.ts"

const token = "adapter-token"
const nodeImages = "/apis/apps.kruise.io/v1alpha1/nodeimages"
const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" }

let scope: Scope.Closeable
let server = ""

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  const address = await Effect.runPromise(serveApi({ token }).pipe(Effect.provide(InMemoryKubeApi.layer), Scope.provide(scope)))
  server = address.url
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const create = (name: string) =>
  fetch(`${server}${nodeImages}`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name }, spec: {} })
  })

describe("requests", () => {
  it("sends method, headers and body, and answers status, headers and text", async () => {
    const created = await create("n-request")
    expect(created.status).toBe(201)
    const seen: Record<string, string> = {}
    created.headers.forEach((value, name) => {
      seen[name] = value
    })
    expect(seen["content-type"]).toContain("application/json")
    expect(JSON.parse(await created.text()).metadata.name).toBe("n-request")

    const got = await fetch(`${server}${nodeImages}/n-request`, { headers, dispatcher: new Agent() })
    expect(got.status).toBe(200)
    expect(JSON.parse(await got.text()).metadata.name).toBe("n-request")
  })

  it("sends a DELETE's body framed, so its preconditions arrive and the connection stays usable", async () => {
    // Node frames a body only for methods that usually carry one: a DELETE's went out with no
    // Content-Length, so the server read none and took the JSON for the next request (HTTP 400).
    const created = JSON.parse(await (await create("n-delete")).text())
    const agent = new Agent()
    const del = (uid: string) =>
      fetch(`${server}${nodeImages}/n-delete`, {
        method: "DELETE",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({ apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid } }),
        dispatcher: agent
      })
    const refused = await del("another-uid")
    expect(refused.status).toBe(409)
    expect(JSON.parse(await refused.text()).message).toContain("Precondition failed: UID in precondition: another-uid")
    const deleted = await del(created.metadata.uid)
    expect(deleted.status).toBe(200)
    expect(JSON.parse(await deleted.text()).metadata.uid).toBe(created.metadata.uid)
    const after = await fetch(`${server}${nodeImages}/n-delete`, { headers, dispatcher: agent })
    expect(after.status).toBe(404)
    await agent.close()
  })

  it("answers an error status as an answer, not a rejection", async () => {
    const missing = await fetch(`${server}${nodeImages}/nowhere`, { headers })
    expect(missing.status).toBe(404)
    expect(JSON.parse(await missing.text()).reason).toBe("NotFound")
    const unauthorized = await fetch(`${server}${nodeImages}`, { headers: { Accept: "application/json" } })
    expect(unauthorized.status).toBe(401)
    await unauthorized.text()
  })

  it("rejects when nothing answers, and with the signal's reason when aborted", async () => {
    await expect(fetch("http://127.0.0.1:1/", {})).rejects.toThrow(/ECONNREFUSED/)
    const reason = new Error("given up")
    await expect(fetch(`${server}${nodeImages}`, { headers, signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
  })
})

describe("watch, read as client-node's Watch reads it", () => {
  it("streams events line by line until aborted; the body then fails with the signal's reason", async () => {
    const controller = new AbortController()
    const response = await fetch(`${server}${nodeImages}?watch=true&allowWatchBookmarks=true`, { headers, signal: controller.signal })
    expect(response.status).toBe(200)
    const body = Readable.fromWeb(response.body as never)
    const failed = new Promise<unknown>((resolve) => body.once("error", resolve))
    const events: Array<{ type: string; name: string }> = []
    const added = new Promise<void>((resolve) => {
      // As Watch does: errors of the lines come through the body, whose listener is above.
      createInterface(body)
        .on("error", () => undefined)
        .on("line", (line) => {
          const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } }
          events.push({ type: event.type, name: event.object.metadata.name })
          if (event.object.metadata.name === "n-watched") resolve()
        })
    })
    expect((await create("n-watched")).status).toBe(201)
    await added
    expect(events).toContainEqual({ type: "ADDED", name: "n-watched" })
    const reason = new DOMException("The operation was aborted due to timeout", "TimeoutError")
    controller.abort(reason)
    expect(await failed).toBe(reason)
  })
})

describe("TLS settings as client-node's KubeConfig passes them (connect: ca, servername, keep-alive)", () => {
  const pki = new TestPki(mkdtempSync(join(tmpdir(), "preheat-adapter-tls-")))
  let ca: string
  let tls: LocalServer
  let tlsUrl = ""

  beforeAll(async () => {
    const authority = pki.authority("cluster-ca")
    const certificate = pki.issue(authority, "apiserver", {
      commonName: "apiserver.test",
      altNames: ["DNS:apiserver.test"],
      usage: "serverAuth"
    })
    ca = authority.certPem
    tls = await listenLocally(
      (request, response) => {
        response.setHeader("content-type", "application/json")
        response.end(JSON.stringify({ path: request.url, authorization: request.headers.authorization ?? null }))
      },
      { cert: certificate.certPem, key: certificate.keyPem }
    )
    tlsUrl = tls.url
  })
  afterAll(() => tls.close())

  it("trusts the cluster's CA for its server name", async () => {
    const dispatcher = new Agent({ connect: { ca, servername: "apiserver.test", keepAlive: true, keepAliveInitialDelay: 30000 } })
    const answer = await fetch(`${tlsUrl}/version`, { headers, dispatcher })
    expect(JSON.parse(await answer.text())).toEqual({ path: "/version", authorization: `Bearer ${token}` })
    await dispatcher.destroy()
  })

  it("refuses a server its CA did not sign, and one whose name does not match", async () => {
    await expect(
      fetch(`${tlsUrl}/version`, { headers, dispatcher: new Agent({ connect: { servername: "apiserver.test" } }) })
    ).rejects.toThrow(/unable to verify the first certificate/)
    await expect(
      fetch(`${tlsUrl}/version`, { headers, dispatcher: new Agent({ connect: { ca, servername: "other.test" } }) })
    ).rejects.toThrow(/altnames|does not match/i)
  })

  it("reaches the server through an HTTP proxy with CONNECT (ProxyAgent, as client-node builds it for proxy-url)", async () => {
    const tunnels: Array<string> = []
    const proxy = await listenLocally((_, response) => response.writeHead(405).end())
    proxy.server.on("connect", (request: http.IncomingMessage, client: Socket, head: Buffer) => {
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
    const dispatcher = new ProxyAgent({
      uri: proxy.url,
      requestTls: { ca, servername: "apiserver.test" },
      connect: { keepAlive: true, keepAliveInitialDelay: 30000 }
    })
    try {
      const answer = await fetch(`${tlsUrl}/through-proxy`, { headers, dispatcher })
      expect(JSON.parse(await answer.text())).toEqual({ path: "/through-proxy", authorization: `Bearer ${token}` })
      expect(tunnels).toEqual([new URL(tlsUrl).host])
    } finally {
      await dispatcher.destroy()
      await proxy.close()
    }
  })

  it("skips verification only when told to (insecure-skip-tls-verify)", async () => {
    const answer = await fetch(`${tlsUrl}/version`, { headers, dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) })
    expect(answer.status).toBe(200)
    await answer.text()
  })
})

describe("close(), as undici's: graceful", () => {
  it("is cut short by destroy(): a request whose answer never began loses its connection", async () => {
    let open = 0
    let arrived = false
    // A server that never begins its answer, as a proxy holding back a watch's headers.
    const server = http.createServer(() => {
      arrived = true
    })
    server.on("connection", (socket: Socket) => {
      open++
      socket.once("close", () => open--)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 1200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
      expect(done()).toBe(true)
    }
    try {
      const dispatcher = new Agent()
      const unanswered = fetch(`${url}/watch`, { dispatcher })
      await until(() => arrived)
      let closed = false
      void dispatcher.close().then(() => {
        closed = true
      })
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect({ open, closed }).toEqual({ open: 1, closed: false })
      await dispatcher.destroy()
      await expect(unanswered).rejects.toThrow()
      await until(() => open === 0 && closed)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it("refuses new requests, closes idle connections at once, lets a request under way finish, then closes its connection", async () => {
    const held: Array<() => void> = []
    let open = 0
    const { url, server, close } = await listenLocally((request, response) => {
      const answer = () => response.end(JSON.stringify({ path: request.url }))
      if (request.url === "/slow") held.push(answer)
      else answer()
    })
    server.on("connection", (socket: Socket) => {
      open++
      socket.once("close", () => open--)
    })
    const until = (what: string, done: () => boolean) => eventually(what, () => (done() ? true : undefined), 30_000, 25)
    try {
      const dispatcher = new Agent()
      const slow = fetch(`${url}/slow`, { dispatcher })
      await until("the slow request", () => held.length === 1)
      const fast = await fetch(`${url}/fast`, { dispatcher })
      expect(JSON.parse(await fast.text())).toEqual({ path: "/fast" })
      expect(open).toBe(2)

      const closed = dispatcher.close()
      await expect(fetch(`${url}/later`, { dispatcher })).rejects.toThrow(/closed/)
      await until("the idle connection closed", () => open === 1)
      held[0]!()
      const answer = await slow
      expect(JSON.parse(await answer.text())).toEqual({ path: "/slow" })
      await closed
      await until("every connection closed", () => open === 0)
    } finally {
      await close()
    }
  })
})
