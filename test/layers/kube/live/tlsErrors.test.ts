// Failed TLS handshakes against real TLS servers (node:https, certificates openssl makes): an
// unknown CA, a host name the certificate does not cover, an expired certificate and a refused
// client certificate each come out as Unavailable naming the kubeconfig field to fix, through the
// live KubeApi (node:https, in the sources as in the bundles). A server the client does not trust
// never gets a request: there is no insecure fallback.
import { mkdtempSync, writeFileSync } from "node:fs"
import type https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer, Logger } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KubeLive } from "../../../../layers/kube/live/kubeLive.ts"
import { ApiAccess } from "../../../../src/kube/ApiAccess.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import type { KubeError, TlsProblem } from "../../../../src/kube/errors.ts"
import { decideOnNoAnswer } from "../../../../layers/kube/live/retryPolicy.ts"
import { withPeerCertificate } from "../../../../layers/kube/live/tlsErrors.ts"
import { resources } from "../../../../src/kube/resources.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { freePort } from "../../../support/freePort.ts"
import { type LocalServer, listenLocally } from "../../../support/localServer.ts"
import { type Authority, type Issued, TestPki } from "../../../support/testPki.ts"

const pki = new TestPki(mkdtempSync(join(tmpdir(), "preheat-tls-errors-")))

interface TlsServer {
  readonly url: string
  /** HTTP requests that got through the handshake. */
  readonly requests: number
}

const servers: Array<LocalServer> = []

/** A TLS server with `certificate` that answers every request with an empty NodeImage list. */
const serve = async (certificate: Issued, options: https.ServerOptions = {}): Promise<TlsServer> => {
  let requests = 0
  const server = await listenLocally(
    (_, response) => {
      requests++
      response.setHeader("content-type", "application/json")
      response.end(
        JSON.stringify({ kind: "NodeImageList", apiVersion: "apps.kruise.io/v1alpha1", metadata: { resourceVersion: "1" }, items: [] })
      )
    },
    { cert: certificate.certPem, key: certificate.keyPem, ...options }
  )
  servers.push(server)
  return {
    url: server.url,
    get requests() {
      return requests
    }
  }
}

const kubeconfig = (server: string, user: string): string => {
  const path = join(pki.dir, `kubeconfig-${Math.random().toString(36).slice(2)}`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: test-cluster
  cluster:
    server: ${server}
    certificate-authority: ${ca.certFile}
users:
- name: test-user
  user:
${user}
contexts:
- name: test
  context: {cluster: test-cluster, user: test-user}
current-context: test
`
  )
  return path
}
const tokenUser = "    token: tls-test-token"
const certificateUser = (certificate: Issued) => `    client-certificate: ${certificate.certFile}\n    client-key: ${certificate.keyFile}`

let ca: Authority
let client: Issued
let foreign: Issued
let unknownCa: TlsServer
let wrongName: TlsServer
let expiredCert: TlsServer
let clientCertificates: TlsServer

beforeAll(async () => {
  ca = pki.authority("ca")
  const otherCa = pki.authority("other-ca")
  const server = (authority: Authority, name: string, altNames: ReadonlyArray<string>, expired = false) =>
    pki.issue(authority, name, { commonName: name, altNames, usage: "serverAuth", expired })
  client = pki.issue(ca, "client", { commonName: "client", usage: "clientAuth" })
  foreign = pki.issue(otherCa, "foreign", { commonName: "foreign", usage: "clientAuth" })
  unknownCa = await serve(server(otherCa, "stranger", ["IP:127.0.0.1"]))
  wrongName = await serve(server(ca, "elsewhere", ["DNS:elsewhere.example"]))
  expiredCert = await serve(server(ca, "expired", ["IP:127.0.0.1"], true))
  // As kube-apiserver with client certificates required: no certificate, no connection.
  clientCertificates = await serve(server(ca, "good", ["IP:127.0.0.1"]), { requestCert: true, rejectUnauthorized: true, ca: ca.certPem })
  // openssl runs fourteen times: generous on a loaded machine.
}, 120_000)

afterAll(async () => {
  for (const server of servers) await server.close()
})

const options = (path: string) => ({ kubeconfig: path, qps: 100, burst: 100, userAgent: "preheat-test/1", maxRetries: 0 })

// The WARN lines are ApiAccess's (apiAccess.test.ts, liveAccess.test.ts); here the checks say the same.
const quiet = Logger.layer([])

/** What a list through the live KubeApi fails with, and the api-access check ApiAccess then gives. */
const listThroughLiveApi = (path: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const access = yield* ApiAccess
    const exit = yield* Effect.exit(api.list(resources.nodeImage))
    return { exit, check: yield* access.check }
  }).pipe(
    Effect.provide(KubeLive.layerWithAccess(options(path)).pipe(Layer.provide(Metrics.layerTest))),
    Effect.scoped,
    Effect.provide(quiet),
    Effect.runPromise
  )

const failureOf = (exit: Exit.Exit<unknown, KubeError>): KubeError => {
  if (Exit.isSuccess(exit)) throw new Error("the request succeeded")
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") throw new Error("no typed failure")
  return error.error
}

const tlsProblem = (error: KubeError): TlsProblem | undefined =>
  error._tag === "Unavailable" && error.connection?._tag === "Tls" ? error.connection.problem : undefined

describe("a failed TLS handshake says what to fix", () => {
  it("an unknown CA: the cluster's certificate-authority, and no request is ever sent", async () => {
    const path = kubeconfig(unknownCa.url, tokenUser)
    const { exit, check } = await listThroughLiveApi(path)
    const error = failureOf(exit)
    expect(tlsProblem(error)).toBe("UnknownCa")
    expect(error.message).toContain("list NodeImage: TLS: the certificate of the API server is not signed by a CA this client trusts")
    expect(error.message).toContain("(UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate")
    expect(check).toEqual({
      name: "api-access",
      ok: false,
      message: expect.stringContaining(
        `set clusters[].cluster.certificate-authority or certificate-authority-data of cluster "test-cluster" in ${path} ` +
          `to the CA that signed it (now certificate-authority: ${ca.certFile})`
      )
    })
    // No fallback: the server never got a single request, with the token or without.
    expect(unknownCa.requests).toBe(0)
  })

  it("a certificate that does not cover the host name: server or tls-server-name", async () => {
    const path = kubeconfig(wrongName.url, tokenUser)
    const { exit, check } = await listThroughLiveApi(path)
    const error = failureOf(exit)
    expect(tlsProblem(error)).toBe("HostNameMismatch")
    expect(error.message).toContain("ERR_TLS_CERT_ALTNAME_INVALID")
    expect(error.message).toContain("the certificate covers DNS:elsewhere.example")
    expect(check.message).toContain(
      `set clusters[].cluster.server of cluster "test-cluster" in ${path} to a name the certificate covers, or tls-server-name to one of them`
    )
    expect(wrongName.requests).toBe(0)
  })

  it("an expired server certificate: renewed on the server, not accepted by any setting", async () => {
    const { exit, check } = await listThroughLiveApi(kubeconfig(expiredCert.url, tokenUser))
    const error = failureOf(exit)
    expect(tlsProblem(error)).toBe("CertificateExpired")
    expect(check.message).toContain(
      `TLS: the certificate of ${expiredCert.url} has expired (on 2020-01-02T00:00:00.000Z) (CERT_HAS_EXPIRED: certificate has expired)`
    )
    expect(check.message).toContain("no kubeconfig setting can accept it")
    expect(expiredCert.requests).toBe(0)
  })

  it("a refused client certificate: the user's client-certificate and client-key", async () => {
    const path = kubeconfig(clientCertificates.url, tokenUser)
    const { exit, check } = await listThroughLiveApi(path)
    const error = failureOf(exit)
    expect(tlsProblem(error)).toBe("ClientCertificateRefused")
    expect(error.message).toContain("ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED")
    expect(check.message).toContain(
      `set users[].user.client-certificate or client-certificate-data and client-key or client-key-data of user "test-user" in ${path}`
    )
    expect(check.message).toContain("(neither is set, so no client certificate was sent)")
    expect(clientCertificates.requests).toBe(0)
  })

  it("a server that just closes the connection on a client certificate it does not trust (as node:https does): the hint names the certificate", async () => {
    const path = kubeconfig(clientCertificates.url, certificateUser(foreign))
    const { exit, check } = await listThroughLiveApi(path)
    const error = failureOf(exit)
    expect(error._tag === "Unavailable" && error.connection?._tag).toBe("Unreachable")
    expect(check.message).toContain(
      "; if this lasts, the server may be refusing the client certificate: check users[].user.client-certificate or " +
        `client-certificate-data and client-key or client-key-data of user "test-user" in ${path}`
    )
    expect(clientCertificates.requests).toBe(0)
  })

  it("the same servers answer a client configured right (so the failures above are the certificates')", async () => {
    const { exit, check } = await listThroughLiveApi(kubeconfig(clientCertificates.url, certificateUser(client)))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(check).toEqual({ name: "api-access", ok: true })
    expect(clientCertificates.requests).toBe(1)
  })

  it("an expired certificate reported with an unknown CA's code (as Deno does) is told as expired by the certificate itself", () => {
    const unknownCa = { _tag: "Tls", problem: "UnknownCa", code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", detail: "unable to verify" } as const
    const now = Date.parse("2026-12-04T00:00:00Z")
    expect(withPeerCertificate(unknownCa, { validTo: new Date("2020-01-02T00:00:00Z") }, now)).toEqual({
      ...unknownCa,
      problem: "CertificateExpired",
      notAfter: "2020-01-02T00:00:00.000Z"
    })
    expect(withPeerCertificate(unknownCa, { validTo: new Date("2027-01-02T00:00:00Z") }, now)).toEqual(unknownCa)
  })

  it("a failed handshake is not retried: it fails the same way every time; a refused connection is", () => {
    expect(decideOnNoAnswer("GET", { _tag: "Tls", problem: "UnknownCa", code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", detail: "" })).toEqual({
      _tag: "Done"
    })
    expect(decideOnNoAnswer("GET", { _tag: "Unreachable", reason: "connect ECONNREFUSED", code: "ECONNREFUSED" })).toEqual({
      _tag: "Backoff"
    })
  })

  it("a connection refused is Unreachable, not a TLS problem", async () => {
    // A port that was just free: nothing listens there.
    const closed = { url: `https://127.0.0.1:${await freePort()}` }
    const { exit, check } = await listThroughLiveApi(kubeconfig(closed.url, tokenUser))
    const error = failureOf(exit)
    expect(error._tag === "Unavailable" && error.connection?._tag).toBe("Unreachable")
    expect(check.message).toBe(`cannot reach ${closed.url}: connect ECONNREFUSED ${closed.url.slice("https://".length)}`)
  })
})
