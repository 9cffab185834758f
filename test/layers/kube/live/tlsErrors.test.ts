// Failed TLS handshakes against real TLS servers (node:https, certificates openssl makes): an
// unknown CA, a host name the certificate does not cover, an expired certificate and a refused
// client certificate each come out as Unavailable naming the kubeconfig field to fix, through the
// live KubeApi (node:https, in the sources as in the bundles). A server the client does not trust
// never gets a request: there is no insecure fallback.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import https from "node:https"
import type { AddressInfo } from "node:net"
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

const dir = mkdtempSync(join(tmpdir(), "preheat-tls-errors-"))
const file = (name: string) => join(dir, name)
const openssl = (...args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" })

/** A key and a certificate for `name` covering `san`, signed by the CA `ca` (files ca.pem, ca.key). */
const signed = (name: string, ca: string, san: string) => {
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-subj",
    `/CN=${name}`,
    "-addext",
    `subjectAltName=${san}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`
  )
  openssl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-copy_extensions",
    "copy",
    "-out",
    `${name}.pem`
  )
}

const selfSignedCa = (name: string) =>
  openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`
  )

/** A certificate valid only on 1 and 2 January 2020: `openssl ca` is what sets dates in the past. */
const expired = (name: string, ca: string) => {
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`
  )
  writeFileSync(file("index.txt"), "")
  writeFileSync(file("serial"), "01\n")
  writeFileSync(
    file("ca.cnf"),
    "[ca]\ndefault_ca = test\n[test]\ndatabase = ./index.txt\nnew_certs_dir = .\nserial = ./serial\ndefault_md = sha256\n" +
      "policy = any\ncopy_extensions = copy\nunique_subject = no\n[any]\ncommonName = supplied\n"
  )
  openssl(
    "ca",
    "-batch",
    "-config",
    "ca.cnf",
    "-cert",
    `${ca}.pem`,
    "-keyfile",
    `${ca}.key`,
    "-in",
    `${name}.csr`,
    "-out",
    `${name}.pem`,
    "-startdate",
    "20200101000000Z",
    "-enddate",
    "20200102000000Z",
    "-notext"
  )
}

interface TlsServer {
  readonly url: string
  /** HTTP requests that got through the handshake. */
  requests: number
  readonly server: https.Server
}

const servers: Array<TlsServer> = []

const serve = (cert: string, options: https.ServerOptions = {}): Promise<TlsServer> =>
  new Promise((resolve) => {
    const state = { url: "", requests: 0, server: undefined as unknown as https.Server }
    const server = https.createServer(
      { cert: readFileSync(file(`${cert}.pem`)), key: readFileSync(file(`${cert}.key`)), ...options },
      (_, response) => {
        state.requests++
        response.setHeader("content-type", "application/json")
        response.end(
          JSON.stringify({ kind: "NodeImageList", apiVersion: "apps.kruise.io/v1alpha1", metadata: { resourceVersion: "1" }, items: [] })
        )
      }
    )
    state.server = server
    server.listen(0, "127.0.0.1", () => {
      state.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
      servers.push(state)
      resolve(state)
    })
  })

const kubeconfig = (server: string, user: string): string => {
  const path = file(`kubeconfig-${Math.random().toString(36).slice(2)}`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: test-cluster
  cluster:
    server: ${server}
    certificate-authority: ${file("ca.pem")}
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
const certificateUser = (name: string) => `    client-certificate: ${file(`${name}.pem`)}\n    client-key: ${file(`${name}.key`)}`

let unknownCa: TlsServer
let wrongName: TlsServer
let expiredCert: TlsServer
let clientCertificates: TlsServer

beforeAll(async () => {
  selfSignedCa("ca")
  selfSignedCa("other-ca")
  signed("good", "ca", "IP:127.0.0.1")
  signed("stranger", "other-ca", "IP:127.0.0.1")
  signed("elsewhere", "ca", "DNS:elsewhere.example")
  signed("client", "ca", "DNS:client")
  signed("foreign", "other-ca", "DNS:client")
  expired("expired", "ca")
  unknownCa = await serve("stranger")
  wrongName = await serve("elsewhere")
  expiredCert = await serve("expired")
  // As kube-apiserver with client certificates required: no certificate, no connection.
  clientCertificates = await serve("good", { requestCert: true, rejectUnauthorized: true, ca: readFileSync(file("ca.pem")) })
  // openssl runs seven times: generous on a loaded machine.
}, 120_000)

afterAll(async () => {
  for (const { server } of servers) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
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
          `to the CA that signed it (now certificate-authority: ${file("ca.pem")})`
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
    const path = kubeconfig(clientCertificates.url, certificateUser("foreign"))
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
    const { exit, check } = await listThroughLiveApi(kubeconfig(clientCertificates.url, certificateUser("client")))
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
    const closed = await serve("good")
    await new Promise<void>((resolve) => closed.server.close(() => resolve()))
    const { exit, check } = await listThroughLiveApi(kubeconfig(closed.url, tokenUser))
    const error = failureOf(exit)
    expect(error._tag === "Unavailable" && error.connection?._tag).toBe("Unreachable")
    expect(check.message).toBe(`cannot reach ${closed.url}: connect ECONNREFUSED ${closed.url.slice("https://".length)}`)
  })
})
