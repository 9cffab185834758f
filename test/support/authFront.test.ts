// The HTTPS front of the credentials system test authenticates and authorizes as kube-apiserver
// does, against a plain upstream that echoes what reached it.
import * as http from "node:http"
import * as https from "node:https"
import { mkdtempSync, rmSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuthFront, forbiddenMessage, resourceRequest } from "./authFront.ts"
import type { Issued } from "./testPki.ts"

let upstream: http.Server
let front: AuthFront
let dir: string

beforeAll(async () => {
  upstream = http.createServer((request, response) => {
    if ((request.url ?? "").includes("watch=true")) {
      response.writeHead(200, { "content-type": "application/json" })
      response.write('{"type":"ADDED"}\n')
      setTimeout(() => response.end('{"type":"MODIFIED"}\n'), 50)
      return
    }
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({ url: request.url, authorization: request.headers.authorization ?? null }))
  })
  await new Promise<void>((done) => upstream.listen(0, "127.0.0.1", () => done()))
  dir = mkdtempSync(join(tmpdir(), "auth-front-"))
  front = await AuthFront.start(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, dir)
}, 30_000)

afterAll(async () => {
  await front?.stop()
  await new Promise<void>((done) => upstream.close(() => done()))
  rmSync(dir, { recursive: true, force: true })
})

interface Answer {
  readonly status: number
  readonly body: string
}

const call = (path: string, options: { token?: string; certificate?: Issued; method?: string; url?: string } = {}): Promise<Answer> =>
  new Promise((done, fail) => {
    const url = new URL(path, options.url ?? front.url)
    const request = https.request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? "GET",
        ca: front.clusterCa.certPem,
        agent: false,
        headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
        ...(options.certificate === undefined ? {} : { cert: options.certificate.certPem, key: options.certificate.keyPem })
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          body += chunk
        })
        response.on("end", () => done({ status: response.statusCode ?? 0, body }))
      }
    )
    request.on("error", fail)
    request.end()
  })

describe("authFront", () => {
  it("answers 401 with kube-apiserver's Status without credentials or with a token it does not accept", async () => {
    for (const answer of [await call("/api/v1/nodes"), await call("/api/v1/nodes", { token: "unknown" })]) {
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body)).toMatchObject({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401
      })
    }
    expect(front.counts("unknown").unauthorized).toBe(1)
  })

  it("forwards an accepted token's requests without the credential, until the token is revoked", async () => {
    front.acceptToken("good", "alice")
    const answer = await call("/api/v1/nodes?limit=1", { token: "good" })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ url: "/api/v1/nodes?limit=1", authorization: null })
    front.revokeToken("good")
    expect((await call("/api/v1/nodes", { token: "good" })).status).toBe(401)
    expect(front.counts("good")).toEqual({ requests: 2, unauthorized: 1, forbidden: 0 })
    expect(front.userCounts("alice").requests).toBe(1)
  })

  it("accepts tokens that name their end until then", async () => {
    front.acceptExpiringTokens("exp-", "bob")
    const now = Math.floor(Date.now() / 1000)
    expect((await call("/api/v1/pods", { token: `exp-${now + 60}-1` })).status).toBe(200)
    expect((await call("/api/v1/pods", { token: `exp-${now - 1}-1` })).status).toBe(401)
  })

  it("authenticates client certificates of its client CA by CN, counts them by fingerprint, and answers a revoked one 401", async () => {
    const certificate = front.issueClientCertificate("unit-client", "carol", ["team"])
    expect((await call("/api/v1/pods", { certificate })).status).toBe(200)
    expect(front.userCounts("carol").requests).toBe(1)
    front.revokeCertificate(certificate.fingerprint)
    expect((await call("/api/v1/pods", { certificate })).status).toBe(401)
    expect(front.counts(`cert:${certificate.fingerprint}`)).toEqual({ requests: 2, unauthorized: 1, forbidden: 0 })
  })

  it("refuses a client certificate another CA signed with a TLS alert on its strict listener", async () => {
    const other = front.pki.authority("unit-other-ca")
    const foreign = front.pki.issue(other, "unit-foreign", { commonName: "mallory", usage: "clientAuth" })
    await expect(call("/api/v1/pods", { certificate: foreign, url: front.clientCertificateUrl })).rejects.toMatchObject({
      code: "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA"
    })
  })

  it("serves certificates a client must refuse: expired, and for another host", async () => {
    await expect(call("/api/v1/pods", { token: "x", url: front.expiredUrl })).rejects.toMatchObject({ code: "CERT_HAS_EXPIRED" })
    await expect(call("/api/v1/pods", { token: "x", url: front.wrongHostUrl })).rejects.toMatchObject({
      code: "ERR_TLS_CERT_ALTNAME_INVALID"
    })
  })

  it("answers 403 with kube-apiserver's Forbidden text for a rule it took away, and only for that rule", async () => {
    front.acceptToken("limited", "dave")
    front.deny({ user: "dave", verb: "list", group: "apps.kruise.io", resource: "imagepulljobs" })
    const denied = await call("/apis/apps.kruise.io/v1alpha1/imagepulljobs", { token: "limited" })
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body)).toMatchObject({
      reason: "Forbidden",
      code: 403,
      details: { group: "apps.kruise.io", kind: "imagepulljobs" },
      message:
        'imagepulljobs.apps.kruise.io is forbidden: User "dave" cannot list resource "imagepulljobs" in API group "apps.kruise.io" at the cluster scope'
    })
    expect((await call("/apis/apps.kruise.io/v1alpha1/imagepulljobs?watch=true", { token: "limited" })).status).toBe(200)
    expect((await call("/apis/apps.kruise.io/v1alpha1/namespaces/a/imagepulljobs/j", { token: "limited" })).status).toBe(200)
  })

  it("streams watches through", async () => {
    front.acceptToken("watcher", "erin")
    const answer = await call("/api/v1/pods?watch=true", { token: "watcher" })
    expect(answer.body).toBe('{"type":"ADDED"}\n{"type":"MODIFIED"}\n')
  })
})

describe("resourceRequest and forbiddenMessage", () => {
  const of = (method: string, path: string) => resourceRequest(method, new URL(path, "https://x"))

  it("resolve the verb and resource as kube-apiserver's RequestInfo does", () => {
    expect(of("GET", "/api/v1/namespaces/ns/pods")).toEqual({ verb: "list", group: "", resource: "pods", namespace: "ns" })
    expect(of("GET", "/api/v1/nodes?watch=1")).toEqual({ verb: "watch", group: "", resource: "nodes" })
    expect(of("PATCH", "/apis/apps.kruise.io/v1alpha1/nodeimages/n1/status")).toEqual({
      verb: "patch",
      group: "apps.kruise.io",
      resource: "nodeimages",
      name: "n1",
      subresource: "status"
    })
    expect(of("DELETE", "/api/v1/namespaces/ns/secrets")).toMatchObject({ verb: "deletecollection" })
    expect(of("POST", "/api/v1/namespaces/ns/events")).toMatchObject({ verb: "create", resource: "events" })
    expect(of("GET", "/version")).toBeUndefined()
    expect(of("GET", "/apis")).toBeUndefined()
  })

  it("words a namespaced, named request with its subresource", () => {
    expect(forbiddenMessage("u", { verb: "patch", group: "", resource: "pods", subresource: "status", namespace: "ns", name: "p" })).toBe(
      'pods "p" is forbidden: User "u" cannot patch resource "pods/status" in API group "" in the namespace "ns"'
    )
  })
})
