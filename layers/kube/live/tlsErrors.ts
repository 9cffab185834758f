// A failed TLS handshake with the API server, told as what to fix in the kubeconfig. Node names
// the failure by an error code, on the error itself or on a cause it wraps. The codes below are
// the ones seen against real TLS servers (test/layers/kube/live/tlsErrors.test.ts). Nothing here
// ever relaxes verification: a failed handshake fails the request.
import { Predicate } from "effect"
import type { ConnectionProblem, TlsProblem } from "../../../src/kube/errors.ts"

type Tls = Extract<ConnectionProblem, { readonly _tag: "Tls" }>

/** Verification of the server's certificate, done here, and the alerts a server sends about ours. */
const problemOfCode: Readonly<Record<string, TlsProblem>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "UnknownCa",
  UNABLE_TO_GET_ISSUER_CERT: "UnknownCa",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "UnknownCa",
  SELF_SIGNED_CERT_IN_CHAIN: "UnknownCa",
  DEPTH_ZERO_SELF_SIGNED_CERT: "UnknownCa",
  ERR_TLS_CERT_ALTNAME_INVALID: "HostNameMismatch",
  CERT_HAS_EXPIRED: "CertificateExpired",
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: "ClientCertificateRefused",
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: "ClientCertificateRefused",
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: "ClientCertificateRefused",
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: "ClientCertificateRefused",
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN: "ClientCertificateRefused",
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED: "ClientCertificateRefused",
  ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: "ClientCertificateRefused"
}

/**
 * The TLS alerts (RFC 8446 6.2) a server sends about the client's certificate. node:https writes
 * the request before a TLS 1.2 handshake ends, so there the alert arrives as a write EPROTO whose
 * only trace of it is OpenSSL's text "... SSL alert number 48".
 */
const clientCertificateAlerts: Readonly<Record<number, string>> = {
  42: "bad certificate",
  43: "unsupported certificate",
  44: "certificate revoked",
  45: "certificate expired",
  46: "certificate unknown",
  48: "unknown ca",
  116: "certificate required"
}
const alertNumber = /SSL alert number (\d+)/

const stringField = (value: unknown, key: string): string | undefined => {
  const field = Predicate.isObject(value) ? value[key] : undefined
  return typeof field === "string" ? field : undefined
}

/** The error and its causes, outermost first (a few levels: a cycle must not hang us). */
const chainOf = (error: unknown): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  for (let current = error; Predicate.isObject(current) && chain.length < 5; current = current["cause"]) chain.push(current)
  return chain
}

const firstLine = (text: string): string => text.split("\n")[0] ?? text

// Node 24 appends this to verification errors; preheat's fix is the kubeconfig's CA, not a Node flag.
const nodeHint = /; if the root CA is installed locally, try running Node\.js with --use-system-ca$/

/** What Node said: OpenSSL's reason ("tlsv1 alert unknown ca") rather than its whole error line. */
const detailOf = (error: unknown, code: string): string => {
  const said = (stringField(error, "reason") ?? firstLine(stringField(error, "message") ?? code)).replace(nodeHint, "")
  // A name mismatch: which names the certificate does cover is the useful part.
  const cert = Predicate.isObject(error) ? error["cert"] : undefined
  const covers = stringField(cert, "subjectaltname")
  return covers === undefined ? said.trim() : `${said.trim().replace(/:$/, "")}; the certificate covers ${covers}`
}

/** The TLS problem behind a failed request, if a failed handshake is what it was. */
export const tlsProblemOf = (error: unknown): Tls | undefined => {
  for (const link of chainOf(error)) {
    const code = stringField(link, "code")
    if (code === undefined) continue
    const problem = problemOfCode[code]
    if (problem !== undefined) return { _tag: "Tls", problem, code, detail: detailOf(link, code) }
    const alert = code === "EPROTO" ? alertNumber.exec(stringField(link, "message") ?? "") : null
    const refused = alert === null ? undefined : clientCertificateAlerts[Number(alert[1])]
    if (refused !== undefined) return { _tag: "Tls", problem: "ClientCertificateRefused", code, detail: `alert ${refused}` }
  }
  return undefined
}

/** Where the client's TLS settings come from, to name the field to fix. Never holds key or token material. */
export interface KubeconfigOrigin {
  /** The kubeconfig file(s) or "the pod's service account". */
  readonly from: string
  readonly server: string
  readonly cluster: string
  readonly user: string
  readonly caFile?: string | undefined
  readonly hasCaData: boolean
  readonly tlsServerName?: string | undefined
  readonly certFile?: string | undefined
  readonly hasCertData: boolean
}

const trustedNow = (origin: KubeconfigOrigin): string =>
  origin.caFile !== undefined
    ? `now certificate-authority: ${origin.caFile}`
    : origin.hasCaData
      ? "now certificate-authority-data"
      : "neither is set, so only the system's CAs are trusted"

const clientCertificateNow = (origin: KubeconfigOrigin): string =>
  origin.certFile !== undefined
    ? `now client-certificate: ${origin.certFile}`
    : origin.hasCertData
      ? "now client-certificate-data"
      : "neither is set, so no client certificate was sent"

const ofCluster = (origin: KubeconfigOrigin | undefined): string =>
  origin === undefined ? "" : ` of cluster "${origin.cluster}" in ${origin.from}`

/**
 * What went wrong and what to change, for a log line or a readiness check. With `origin`, the
 * kubeconfig, cluster and user are named and the current setting is said.
 */
export const explainTls = (tls: Tls, origin?: KubeconfigOrigin): string => {
  const server = origin === undefined ? "the API server" : origin.server
  const said = `(${tls.code}: ${tls.detail})`
  switch (tls.problem) {
    case "UnknownCa":
      return (
        `TLS: the certificate of ${server} is not signed by a CA this client trusts ${said}: set ` +
        `clusters[].cluster.certificate-authority or certificate-authority-data${ofCluster(origin)} to the CA that signed it` +
        (origin === undefined ? "" : ` (${trustedNow(origin)})`)
      )
    case "HostNameMismatch":
      return (
        `TLS: the certificate of ${server} does not cover the host name connected to ${said}: set ` +
        `clusters[].cluster.server${ofCluster(origin)} to a name the certificate covers, or tls-server-name to one of them` +
        (origin?.tlsServerName === undefined ? "" : ` (now tls-server-name: ${origin.tlsServerName})`)
      )
    case "CertificateExpired":
      return (
        `TLS: the certificate of ${server} has expired${tls.notAfter === undefined ? "" : ` (on ${tls.notAfter})`} ${said}: ` +
        "the API server's certificate must be renewed " +
        "(or this machine's clock is wrong); no kubeconfig setting can accept it"
      )
    case "ClientCertificateRefused":
      return (
        `TLS: ${server} refused this client's certificate ${said}: set users[].user.client-certificate or ` +
        `client-certificate-data and client-key or client-key-data` +
        (origin === undefined ? "" : ` of user "${origin.user}" in ${origin.from}`) +
        " to a certificate the cluster's client CA signed and that has not expired" +
        (origin === undefined ? "" : ` (${clientCertificateNow(origin)})`)
      )
  }
}

/**
 * `tls` told better by the certificate the server presents (peerCertificate.ts): an expired one is
 * said to be expired, with its notAfter, whatever code the runtime gave (Deno: an unknown CA's).
 */
export const withPeerCertificate = (tls: Tls, certificate: { readonly validTo: Date }, now: number): Tls =>
  (tls.problem === "UnknownCa" || tls.problem === "CertificateExpired") && certificate.validTo.getTime() < now
    ? { ...tls, problem: "CertificateExpired", notAfter: certificate.validTo.toISOString() }
    : tls
