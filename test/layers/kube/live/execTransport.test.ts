// The live transport with an exec credential plugin, over real HTTPS: a small node:https front
// that checks the bearer token or client certificate of every request (401 otherwise), and real
// plugin scripts. A 401 to a credential without expiry runs the plugin once and the request goes
// again; a burst of 401s runs it once; renewed client certificates are used for new connections
// while a request under way on the old one finishes; an expired credential is replaced on the first
// request after its expiry (TestClock); a watch answered 401 makes the next watch use a new one.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TLSSocket } from "node:tls"
import { assert, describe, it } from "@effect/vitest"
import { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect, Exit, Fiber, Stream } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { makeRateLimiter } from "../../../../layers/kube/live/rateLimiter.ts"
import type { RequestTarget } from "../../../../layers/kube/live/statusErrors.ts"
import { makeTransport, type Transport } from "../../../../layers/kube/live/transport.ts"
import { watchStream } from "../../../../layers/kube/live/watchStream.ts"
import { resources } from "../../../../src/kube/resources.ts"
import { eventually } from "../../../support/eventually.ts"
import { localServer } from "../../../support/localServer.ts"
import { type Authority, type Issued, TestPki } from "../../../support/testPki.ts"
import { filePlugin, tokenPlugin } from "./execPluginScript.ts"

const pki = new TestPki(mkdtempSync(join(tmpdir(), "preheat-exec-pki-")))
const clusterCa: Authority = pki.authority("cluster-ca")
const serverCertificate = pki.issue(clusterCa, "server", { commonName: "apiserver", usage: "serverAuth", altNames: ["IP:127.0.0.1"] })
const clientCa = pki.authority("client-ca")
const clientCertificate = (name: string): Issued => pki.issue(clientCa, name, { commonName: name, usage: "clientAuth" })

interface Seen {
  readonly path: string
  readonly token: string | undefined
  /** The client certificate's common name. */
  readonly client: string | undefined
}

interface Front {
  readonly url: string
  readonly seen: Array<Seen>
  /** Which credentials it accepts now. */
  accepts: (seen: Seen) => boolean
  /** Open connections per client certificate name. */
  readonly open: Map<string, number>
  /** Answers the requests held at /slow. */
  readonly release: () => void
}

const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "ns", resourceVersion: "1" } })
const unauthorized = { kind: "Status", apiVersion: "v1", status: "Failure", message: "Unauthorized", reason: "Unauthorized", code: 401 }

const startFront: Effect.Effect<Front, never, Scope.Scope> = Effect.gen(function* () {
  const held: Array<() => void> = []
  const front = {
    url: "",
    seen: [] as Array<Seen>,
    accepts: (_: Seen) => true,
    open: new Map<string, number>(),
    release: () => {
      for (const answer of held.splice(0)) answer()
    }
  }
  const { url, server } = yield* localServer(
    (request, response) => {
      const socket = request.socket as TLSSocket
      const client = socket.authorized ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined
      const authorization = request.headers.authorization
      const seen = { path: request.url ?? "", token: authorization?.replace(/^Bearer /, ""), client }
      front.seen.push(seen)
      const answer = (code: number, body: unknown) => {
        response.writeHead(code, { "content-type": "application/json" })
        response.end(JSON.stringify(body))
      }
      if (!front.accepts(seen)) return answer(401, unauthorized)
      const url = new URL(request.url ?? "/", "https://front")
      if (url.searchParams.get("watch") === "true") {
        response.writeHead(200, { "content-type": "application/json" })
        const event = `${JSON.stringify({ type: "ADDED", object: pod("watched") })}\n`
        // A watch of the "held" namespace stays open, as a real one does for minutes.
        if (url.pathname.includes("/held/")) response.write(event)
        else response.end(event)
        return
      }
      if (url.pathname.endsWith("/slow")) return void held.push(() => answer(200, pod("slow")))
      answer(200, pod(url.pathname.split("/").pop() ?? ""))
    },
    { key: serverCertificate.keyPem, cert: serverCertificate.certPem, ca: clientCa.certPem, requestCert: true, rejectUnauthorized: false }
  )
  server.on("secureConnection", (socket: TLSSocket) => {
    const name = (socket.authorized ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined) ?? "none"
    front.open.set(name, (front.open.get(name) ?? 0) + 1)
    socket.once("close", () => front.open.set(name, (front.open.get(name) ?? 1) - 1))
  })
  // Added after the server, so run before it closes: what is held gets its answer.
  yield* Effect.addFinalizer(() => Effect.sync(front.release))
  front.url = url
  return front
})

const configFor = (front: Front, exec: Record<string, unknown>, user: Record<string, unknown> = {}): KubeConfig => {
  const config = new KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: "c", server: front.url, caData: Buffer.from(clusterCa.certPem).toString("base64"), skipTLSVerify: false }],
    users: [{ name: "u", exec: { apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never", ...exec }, ...user }],
    contexts: [{ name: "ctx", cluster: "c", user: "u" }],
    currentContext: "ctx"
  })
  return config
}

const transportFor = (config: KubeConfig) =>
  makeTransport(config, {
    userAgent: "exec-test",
    limiter: makeRateLimiter({ qps: 1000, burst: 1000 }),
    requestTimeout: Duration.seconds(30)
  })

const target = (name: string): RequestTarget => ({ verb: "get", resource: resources.pod, name, namespace: "ns" })
const get = (transport: Transport, name: string) =>
  Effect.map(transport.send({ method: "GET", path: `/api/v1/namespaces/ns/pods/${name}` }, target(name)), (answer) => answer.status)

/** Polls (in real time: the plugin and the server do not run on the TestClock) until `done`. */
const until = (done: () => boolean, what: string): Effect.Effect<void> =>
  Effect.promise(() => eventually(what, () => (done() ? true : undefined), 30_000, 25))

describe("the transport with an exec plugin, over HTTPS", () => {
  it.effect("a 401 to a credential without expiry runs the plugin once and the request goes again; a burst of 401s runs it once", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const tokens = tokenPlugin()
      const transport = yield* transportFor(configFor(front, { command: tokens.command }))
      front.accepts = (seen) => seen.token === "t-2"
      assert.strictEqual(yield* get(transport, "a"), 200)
      assert.strictEqual(tokens.runs(), 2)
      assert.deepStrictEqual(
        front.seen.map((seen) => seen.token),
        ["t-1", "t-2"]
      )
      assert.strictEqual(yield* get(transport, "b"), 200)
      assert.strictEqual(tokens.runs(), 2)

      // The server stops accepting t-2: eight requests refused at once, one plugin run.
      front.accepts = (seen) => seen.token === "t-3"
      front.seen.length = 0
      const statuses = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => get(transport, `burst-${i}`)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(statuses, Array(8).fill(200))
      assert.strictEqual(tokens.runs(), 3)
      assert.deepStrictEqual(front.seen.map((seen) => seen.token).sort(), [...Array(8).fill("t-2"), ...Array(8).fill("t-3")])

      // Refused again with the new credential: that second 401 is the answer.
      front.accepts = () => false
      assert.strictEqual(yield* get(transport, "c"), 401)
      assert.strictEqual(tokens.runs(), 4)
    }).pipe(Effect.scoped)
  )

  it.effect("renewed client certificates are used for new connections; a request under way on the old one finishes there", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const first = clientCertificate("client-1")
      const second = clientCertificate("client-2")
      const certificates = filePlugin()
      certificates.write(1, { clientCertificateData: first.certPem, clientKeyData: first.keyPem })
      certificates.write(2, { clientCertificateData: second.certPem, clientKeyData: second.keyPem })
      const transport = yield* transportFor(configFor(front, { command: certificates.command }))
      front.accepts = (seen) => seen.client === "client-1"
      assert.strictEqual(yield* get(transport, "a"), 200)
      const slow = yield* Effect.forkChild(get(transport, "slow"))
      yield* until(() => front.seen.some((seen) => seen.path.endsWith("/slow")), "the slow request to arrive")
      const watching = yield* Effect.forkChild(
        watchStream(
          transport,
          makeRateLimiter({ qps: 1000, burst: 1000 }),
          { path: "/api/v1/namespaces/held/pods", query: {}, idleTimeoutMillis: 60_000 },
          { verb: "watch", resource: resources.pod, name: "", namespace: "held" }
        ).pipe(Stream.runCollect)
      )
      yield* until(() => front.seen.some((seen) => seen.path.includes("/held/")), "the watch to start")

      // client-1 is revoked: the 401 makes the plugin hand out client-2, on a new connection.
      front.accepts = (seen) => seen.client === "client-2"
      assert.strictEqual(yield* get(transport, "b"), 200)
      assert.strictEqual(certificates.runs(), 2)
      assert.deepStrictEqual(
        front.seen.map((seen) => `${seen.path.split("/").pop()} ${seen.client}`),
        ["a client-1", "slow client-1", "pods?watch=true client-1", "b client-1", "b client-2"]
      )
      assert.strictEqual(yield* get(transport, "c"), 200)
      assert.strictEqual(front.seen.at(-1)?.client, "client-2")
      assert.strictEqual(certificates.runs(), 2)

      // A watch on the old certificate ends cleanly (its caller resumes it on the new one).
      const watched = yield* Fiber.join(watching)
      assert.deepStrictEqual(
        Array.from(watched, (event) => event.type),
        ["ADDED"]
      )
      // The old pool is drained, not destroyed: the request under way on it gets its answer, then its connection closes.
      front.release()
      assert.strictEqual(yield* Fiber.join(slow), 200)
      yield* until(() => front.open.get("client-1") === 0, "the old certificate's connection to close")
    }).pipe(Effect.scoped)
  )

  it.effect("an expired credential is replaced on the first request after its expirationTimestamp", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const tokens = tokenPlugin()
      const transport = yield* transportFor(
        configFor(front, { command: tokens.command, env: [{ name: "EXPIRES", value: "1970-01-01T00:01:00Z" }] })
      )
      assert.strictEqual(yield* get(transport, "a"), 200)
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* get(transport, "b"), 200)
      assert.strictEqual(tokens.runs(), 1)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* get(transport, "c"), 200)
      assert.strictEqual(tokens.runs(), 2)
      assert.deepStrictEqual(
        front.seen.map((seen) => seen.token),
        ["t-1", "t-1", "t-2"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a watch answered 401 replaces the credential: the next watch uses a new one", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const tokens = tokenPlugin()
      const transport = yield* transportFor(configFor(front, { command: tokens.command }))
      front.accepts = (seen) => seen.token === "t-2"
      const watch = () =>
        watchStream(
          transport,
          makeRateLimiter({ qps: 1000, burst: 1000 }),
          { path: "/api/v1/namespaces/ns/pods", query: {}, idleTimeoutMillis: 30_000 },
          { verb: "watch", resource: resources.pod, name: "", namespace: "ns" }
        ).pipe(Stream.runCollect, Effect.exit)
      const refused = yield* watch()
      assert.isTrue(Exit.isFailure(refused))
      const events = yield* watch()
      assert.isTrue(Exit.isSuccess(events))
      if (Exit.isSuccess(events))
        assert.deepStrictEqual(
          Array.from(events.value, (event) => event.type),
          ["ADDED"]
        )
      assert.strictEqual(tokens.runs(), 2)
      assert.deepStrictEqual(
        front.seen.map((seen) => seen.token),
        ["t-1", "t-2"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("as client-go: a user with a token of its own never runs its plugin", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const tokens = tokenPlugin()
      const transport = yield* transportFor(configFor(front, { command: tokens.command }, { token: "static" }))
      assert.strictEqual(yield* get(transport, "a"), 200)
      assert.strictEqual(front.seen[0]?.token, "static")
      assert.strictEqual(tokens.runs(), 0)
    }).pipe(Effect.scoped)
  )

  it.effect("a plugin that cannot give a credential fails the request with its message, without sending it", () =>
    Effect.gen(function* () {
      const front = yield* startFront
      const transport = yield* transportFor(configFor(front, { command: join(tmpdir(), "no-such-plugin"), installHint: "see the docs" }))
      const error = yield* Effect.flip(get(transport, "a"))
      assert.strictEqual(error._tag, "Unavailable")
      assert.include(error.message, "no-such-plugin")
      assert.include(error.message, "see the docs")
      assert.lengthOf(front.seen, 0)
    }).pipe(Effect.scoped)
  )
})
