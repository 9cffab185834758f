/**
 * An HTTPS front that authenticates and authorizes as kube-apiserver does (issue 23), before an
 * API server that serves plain HTTP without authentication (the embedded one): the clients see a
 * cluster CA, a server certificate, client certificates from a client CA, bearer tokens the test
 * accepts, rotates and revokes, and RBAC rules the test takes away. It answers as kube-apiserver
 * words it: 401 with the Unauthorized Status, 403 with the Forbidden Status naming verb, resource
 * and group. It counts requests per credential and per user, and keeps track of open connections
 * per client certificate, for the tests' assertions.
 *
 * Listeners: `url` serves a certificate covering 127.0.0.1 and localhost; `expiredUrl` one whose
 * validity ended in 2020; `wrongHostUrl` one for another host name only. A client certificate the
 * client CA did not sign ends the connection right after the handshake there; `clientCertificateUrl`
 * refuses it during the handshake with a TLS alert, as Go's TLS stack in kube-apiserver does
 * (node:tls cannot send that alert, so `openssl s_server` serves it; it answers no API requests).
 * A certificate the test revoked (by fingerprint) is answered 401, as kube-apiserver answers a
 * credential it no longer accepts.
 *
 * node:https rather than a proxy library: watches must stream through untouched, and each request
 * needs the peer certificate of its own connection.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import type * as https from "node:https"
import type { TLSSocket } from "node:tls"
import { ApiFailure, statusBody } from "../../harness/apiserver/http/apiStatus.ts"
import { freePort } from "./freePort.ts"
import { type LocalServer, listenLocally } from "./localServer.ts"
import { type Authority, type Issued, TestPki } from "./testPki.ts"

/** The Kubernetes verb and resource of a request, as kube-apiserver's RequestInfo resolves it. */
export interface ResourceRequest {
  readonly verb: string
  /** "" for the core group. */
  readonly group: string
  readonly resource: string
  readonly subresource?: string
  readonly namespace?: string
  readonly name?: string
}

/** An RBAC rule the test takes away from one user: `verb` on `group`/`resource`. */
export interface Denial {
  readonly user: string
  readonly verb: string
  readonly group: string
  readonly resource: string
}

export interface CredentialCounts {
  /** Requests that carried this credential (answered or not). */
  requests: number
  unauthorized: number
  forbidden: number
}

/** Answers as kube-apiserver words them. */
const failure = (code: number, reason: string, message: string, details?: { group: string; kind: string; name?: string }) =>
  JSON.stringify(statusBody(new ApiFailure({ code, reason, message, ...(details === undefined ? {} : { details }) })))

export const unauthorizedBody = failure(401, "Unauthorized", "Unauthorized")

/** kube-apiserver's Forbidden message (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.forbiddenMessage). */
export const forbiddenMessage = (user: string, request: ResourceRequest): string => {
  const qualified = request.group === "" ? request.resource : `${request.resource}.${request.group}`
  const resource = request.subresource === undefined ? request.resource : `${request.resource}/${request.subresource}`
  const scope = request.namespace === undefined ? "at the cluster scope" : `in the namespace "${request.namespace}"`
  const subject = request.name === undefined ? qualified : `${qualified} "${request.name}"`
  return `${subject} is forbidden: User "${user}" cannot ${request.verb} resource "${resource}" in API group "${request.group}" ${scope}`
}

/** The verb and resource of an API path, or undefined for a non-resource path (/version, /apis, ...). */
export const resourceRequest = (method: string, url: URL): ResourceRequest | undefined => {
  const parts = url.pathname.split("/").filter((p) => p !== "")
  const [group, rest] = parts[0] === "api" ? ["", parts.slice(2)] : parts[0] === "apis" ? [parts[1] ?? "", parts.slice(3)] : [undefined, []]
  if (group === undefined || rest.length === 0) return undefined
  const namespaced = rest[0] === "namespaces" && rest.length >= 3
  const namespace = namespaced ? rest[1] : undefined
  const [resource, name, subresource] = namespaced ? rest.slice(2) : rest
  if (resource === undefined) return undefined
  const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1"
  const verb =
    method === "GET" || method === "HEAD"
      ? name !== undefined
        ? "get"
        : watch
          ? "watch"
          : "list"
      : method === "POST"
        ? "create"
        : method === "PUT"
          ? "update"
          : method === "PATCH"
            ? "patch"
            : name !== undefined
              ? "delete"
              : "deletecollection"
  return {
    verb,
    group,
    resource,
    ...(subresource === undefined ? {} : { subresource }),
    ...(namespace === undefined ? {} : { namespace }),
    ...(name === undefined ? {} : { name })
  }
}

export class AuthFront {
  readonly pki: TestPki
  /** The CA the front's server certificates chain to: a kubeconfig's certificate-authority-data. */
  readonly clusterCa: Authority
  /** The CA whose client certificates the front accepts. */
  readonly clientCa: Authority
  /** Requests per credential: a token, or `cert:FINGERPRINT`. */
  readonly byCredential = new Map<string, CredentialCounts>()
  /** Requests per authenticated user. */
  readonly byUser = new Map<string, CredentialCounts>()
  /** Connections that presented a client certificate the client CA did not sign (ended at once). */
  refusedCertificates = 0
  private readonly tokens = new Map<string, string>()
  /** Prefixes of tokens that name their own end: `PREFIX<unix seconds>-...`, valid until then. */
  private readonly expiringTokens = new Map<string, string>()
  private readonly revokedCertificates = new Set<string>()
  private readonly denials: Array<Denial> = []
  private readonly openByCertificate = new Map<string, Set<TLSSocket>>()
  private readonly listeners = new Map<string, LocalServer<https.Server>>()
  private strict: { readonly child: ChildProcess; readonly port: number } | undefined
  private readonly upstream: URL

  private constructor(upstream: URL, pki: TestPki) {
    this.upstream = upstream
    this.pki = pki
    this.clusterCa = pki.authority("cluster-ca")
    this.clientCa = pki.authority("client-ca")
  }

  /** A front before `upstream` (http://host:port), its certificates made in `dir`. */
  static async start(upstream: string, dir: string): Promise<AuthFront> {
    const front = new AuthFront(new URL(upstream), new TestPki(dir))
    const { pki, clusterCa } = front
    const covering = ["IP:127.0.0.1", "DNS:localhost"]
    await front.listen("main", pki.issue(clusterCa, "server", { commonName: "kube-apiserver", altNames: covering, usage: "serverAuth" }))
    await front.listen(
      "expired",
      pki.issue(clusterCa, "server-expired", { commonName: "kube-apiserver", altNames: covering, usage: "serverAuth", expired: true })
    )
    await front.listen(
      "wrongHost",
      pki.issue(clusterCa, "server-wrong-host", { commonName: "other.example", altNames: ["DNS:other.example"], usage: "serverAuth" })
    )
    await front.listenStrictly(
      pki.issue(clusterCa, "server-strict", { commonName: "kube-apiserver", altNames: covering, usage: "serverAuth" })
    )
    return front
  }

  private urlOf(listener: string): string {
    return `https://127.0.0.1:${this.listeners.get(listener)?.port ?? 0}`
  }

  get url(): string {
    return this.urlOf("main")
  }

  get expiredUrl(): string {
    return this.urlOf("expired")
  }

  get wrongHostUrl(): string {
    return this.urlOf("wrongHost")
  }

  /** Requires a client certificate the client CA signed; refuses any other with a TLS alert. */
  get clientCertificateUrl(): string {
    return `https://127.0.0.1:${this.strict?.port ?? 0}`
  }

  /** From now on `token` authenticates as `user`. */
  acceptToken(token: string, user: string): void {
    this.tokens.set(token, user)
  }

  /** From now on `token` is answered 401. */
  revokeToken(token: string): void {
    this.tokens.delete(token)
  }

  /** Tokens `PREFIX<unix seconds>-...` authenticate as `user` until that second; later ones get 401. */
  acceptExpiringTokens(prefix: string, user: string): void {
    this.expiringTokens.set(prefix, user)
  }

  /** A client certificate for `user` (CN) in `groups` (O), signed by the client CA. */
  issueClientCertificate(name: string, user: string, groups: ReadonlyArray<string> = []): Issued {
    return this.pki.issue(this.clientCa, name, { commonName: user, organizations: groups, usage: "clientAuth" })
  }

  /** From now on requests presenting this certificate get 401; connections already open stay open. */
  revokeCertificate(fingerprint: string): void {
    this.revokedCertificates.add(fingerprint)
  }

  /** Takes `verb` on `group`/`resource` away from `user`: 403 Forbidden from now on. */
  deny(denial: Denial): void {
    this.denials.push(denial)
  }

  /** Connections open now that presented this client certificate. */
  openConnections(fingerprint: string): number {
    return this.openByCertificate.get(fingerprint)?.size ?? 0
  }

  counts(credential: string): CredentialCounts {
    return this.byCredential.get(credential) ?? { requests: 0, unauthorized: 0, forbidden: 0 }
  }

  userCounts(user: string): CredentialCounts {
    return this.byUser.get(user) ?? { requests: 0, unauthorized: 0, forbidden: 0 }
  }

  async stop(): Promise<void> {
    this.strict?.child.kill()
    await Promise.all([...this.listeners.values()].map((listener) => listener.close()))
  }

  private async listen(name: string, certificate: Issued): Promise<void> {
    const listener = await listenLocally((request, response) => this.handle(request, response), {
      cert: certificate.certPem,
      key: certificate.keyPem,
      // As kube-apiserver: a client certificate is optional, but one that is given must verify.
      requestCert: true,
      rejectUnauthorized: false,
      ca: this.clientCa.certPem,
      keepAliveTimeout: 30_000
    })
    listener.server.on("secureConnection", (socket: TLSSocket) => this.admit(socket))
    this.listeners.set(name, listener)
  }

  private async listenStrictly(certificate: Issued): Promise<void> {
    const port = await freePort()
    const child = spawn(
      "openssl",
      [
        "s_server",
        "-accept",
        `127.0.0.1:${port}`,
        "-cert",
        certificate.certFile,
        "-key",
        certificate.keyFile,
        "-CAfile",
        this.clientCa.certFile,
        "-Verify",
        "1",
        "-verify_return_error",
        "-www"
      ],
      { stdio: ["ignore", "pipe", "ignore"] }
    )
    this.strict = { child, port }
    await new Promise<void>((done, fail) => {
      child.once("exit", (code) => fail(new Error(`openssl s_server exited with ${code}`)))
      child.stdout?.on("data", (data: Buffer) => {
        if (data.toString().includes("ACCEPT")) done()
      })
    })
    child.stdout?.resume()
  }

  /** Ends a connection whose client certificate does not verify; tracks the others by certificate. */
  private admit(socket: TLSSocket): void {
    const presented = socket.getPeerCertificate()
    if (presented === null || Object.keys(presented).length === 0) return
    if (!socket.authorized) {
      this.refusedCertificates++
      socket.destroy()
      return
    }
    const fingerprint = presented.fingerprint256
    const open = this.openByCertificate.get(fingerprint) ?? new Set<TLSSocket>()
    this.openByCertificate.set(fingerprint, open)
    open.add(socket)
    socket.once("close", () => open.delete(socket))
  }

  private count(key: string, table: Map<string, CredentialCounts>, outcome: "ok" | "unauthorized" | "forbidden"): void {
    const counts = table.get(key) ?? { requests: 0, unauthorized: 0, forbidden: 0 }
    table.set(key, counts)
    counts.requests++
    if (outcome !== "ok") counts[outcome]++
  }

  /** The credential a request carries and the user it authenticates as (undefined: 401). */
  private authenticate(request: http.IncomingMessage): { readonly credential: string; readonly user: string | undefined } {
    const socket = request.socket as TLSSocket
    const peer = socket.authorized ? socket.getPeerCertificate() : undefined
    if (peer !== undefined && Object.keys(peer).length > 0) {
      const credential = `cert:${peer.fingerprint256}`
      return { credential, user: this.revokedCertificates.has(peer.fingerprint256) ? undefined : String(peer.subject.CN) }
    }
    const authorization = request.headers.authorization ?? ""
    const token = authorization.startsWith("Bearer ") ? authorization.slice("Bearer ".length).trim() : ""
    if (token === "") return { credential: "anonymous", user: undefined }
    const listed = this.tokens.get(token)
    if (listed !== undefined) return { credential: token, user: listed }
    for (const [prefix, user] of this.expiringTokens) {
      if (!token.startsWith(prefix)) continue
      const until = Number(token.slice(prefix.length).split("-")[0])
      return { credential: token, user: Date.now() < until * 1000 ? user : undefined }
    }
    return { credential: token, user: undefined }
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const { credential, user } = this.authenticate(request)
    if (user === undefined) {
      this.count(credential, this.byCredential, "unauthorized")
      request.resume()
      response.writeHead(401, { "content-type": "application/json" })
      response.end(unauthorizedBody)
      return
    }
    const target = resourceRequest(request.method ?? "GET", new URL(request.url ?? "/", "https://front.local"))
    const denied =
      target !== undefined &&
      this.denials.some((d) => d.user === user && d.verb === target.verb && d.group === target.group && d.resource === target.resource)
    const outcome = denied ? "forbidden" : "ok"
    this.count(credential, this.byCredential, outcome)
    this.count(user, this.byUser, outcome)
    if (denied && target !== undefined) {
      request.resume()
      response.writeHead(403, { "content-type": "application/json" })
      response.end(
        failure(403, "Forbidden", forbiddenMessage(user, target), {
          group: target.group,
          kind: target.resource,
          ...(target.name === undefined ? {} : { name: target.name })
        })
      )
      return
    }
    this.forward(request, response)
  }

  /** To the API server behind, without the credential (it trusts the front), streaming both ways. */
  private forward(request: http.IncomingMessage, response: http.ServerResponse): void {
    const { authorization: _credential, ...headers } = request.headers
    const upstream = http.request(
      { host: this.upstream.hostname, port: this.upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        // At once, as kube-apiserver begins a watch's answer (WriteHeader, then Flush) before any
        // event: node:http would hold the head back until the first byte of the body.
        response.flushHeaders()
        answer.pipe(response)
      }
    )
    upstream.on("error", () => response.destroy())
    response.on("close", () => upstream.destroy())
    request.pipe(upstream)
  }
}
