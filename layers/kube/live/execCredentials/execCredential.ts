// What a plugin printed, checked as client-go checks it. A problem is described without quoting
// anything the plugin printed: its output is a credential.
import { createPrivateKey, X509Certificate } from "node:crypto"
import { Predicate, Result } from "effect"
import { type ExecApiVersion, execApiVersions } from "./execConfig.ts"

export interface ExecCredential {
  readonly token: string | undefined
  /** PEM, both or neither. */
  readonly clientCertificateData: string | undefined
  readonly clientKeyData: string | undefined
  /** Epoch milliseconds; undefined: valid until the server refuses it. */
  readonly expiresAt: number | undefined
}

// metav1.Time reads RFC 3339 only.
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

const optionalString = (value: unknown): value is string | undefined => value === undefined || typeof value === "string"

const keyPairProblem = (certificate: string, key: string): string | undefined => {
  try {
    const parsedKey = createPrivateKey(key)
    let parsedCertificate: X509Certificate
    try {
      parsedCertificate = new X509Certificate(certificate)
    } catch {
      return "a clientCertificateData that is not a PEM certificate"
    }
    return parsedCertificate.checkPrivateKey(parsedKey) ? undefined : "a client certificate and a key that do not belong together"
  } catch {
    return "a clientKeyData that is not a PEM private key"
  }
}

/** The credential in `stdout`, or what is wrong with it (never quoting it). */
export const parseExecCredential = (stdout: string, apiVersion: ExecApiVersion): Result.Result<ExecCredential, string> => {
  let printed: unknown
  try {
    printed = JSON.parse(stdout)
  } catch {
    return Result.fail("printed something that is not JSON")
  }
  if (!Predicate.isObject(printed) || printed["kind"] !== "ExecCredential") return Result.fail("printed JSON that is not an ExecCredential")
  const version = printed["apiVersion"]
  if (version !== apiVersion) {
    // Only a version client-go knows is repeated: anything else the plugin printed stays unsaid.
    const known = execApiVersions.includes(version as ExecApiVersion) ? ` ${version as string}` : " another apiVersion"
    return Result.fail(`answered with${known} where the kubeconfig asks for ${apiVersion}`)
  }
  const status = printed["status"]
  if (!Predicate.isObject(status)) return Result.fail("returned no status")
  const { token, clientCertificateData, clientKeyData, expirationTimestamp } = status
  if (!optionalString(token) || !optionalString(clientCertificateData) || !optionalString(clientKeyData)) {
    return Result.fail("returned a status whose token, clientCertificateData or clientKeyData is not a string")
  }
  if (!token && !clientCertificateData && !clientKeyData) return Result.fail("returned neither a token nor a client certificate and key")
  if (!clientCertificateData !== !clientKeyData) return Result.fail("returned only one of clientCertificateData and clientKeyData")
  if (clientCertificateData && clientKeyData) {
    const problem = keyPairProblem(clientCertificateData, clientKeyData)
    if (problem !== undefined) return Result.fail(`returned ${problem}`)
  }
  let expiresAt: number | undefined
  if (expirationTimestamp !== undefined && expirationTimestamp !== null) {
    expiresAt = typeof expirationTimestamp === "string" && rfc3339.test(expirationTimestamp) ? Date.parse(expirationTimestamp) : Number.NaN
    if (Number.isNaN(expiresAt)) return Result.fail("returned an expirationTimestamp that is not an RFC 3339 time")
  }
  return Result.succeed({
    token: token || undefined,
    clientCertificateData: clientCertificateData || undefined,
    clientKeyData: clientKeyData || undefined,
    expiresAt
  })
}
