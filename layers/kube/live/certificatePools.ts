// Connection pools for the client certificates an exec plugin hands out. client-go closes every
// connection when the certificate changes; here new requests get a pool carrying the new one and
// the old pool is closed gracefully: requests under way on it finish there, and watches on it are
// told to end cleanly, to be resumed at once on the new pool (a watch may otherwise hold the old
// certificate's connection for ten minutes); what is left on it after the request timeout is cut.
import type http from "node:http"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { drain } from "./connectionPool.ts"
import type { ExecCredential } from "./execCredentials/execCredential.ts"

export interface CertificatePools {
  /**
   * The pool for a request made with `credential`, asked for as it is sent: the shared one when the
   * credential carries no client certificate, else the latest certificate's.
   */
  readonly agentFor: (credential: ExecCredential) => http.Agent
  /**
   * Calls `end` once the certificate of the credential `used()` returns (the one a watch was made
   * with, known once it authenticated) is replaced; the result unregisters.
   */
  readonly onRetired: (used: () => ExecCredential | undefined, end: () => void) => () => void
}

type Certificate = { readonly cert: string; readonly key: string }

const pairOf = (credential: ExecCredential | undefined): string | undefined =>
  credential?.clientCertificateData === undefined || credential.clientKeyData === undefined
    ? undefined
    : `${credential.clientCertificateData}\n${credential.clientKeyData}`

/**
 * Closes a retired pool once its requests are done, and at the latest after `deadline`: by then
 * every request under way on it was abandoned (the request timeout), so what still holds a
 * connection is a watch whose answer never began (ended and resumed on the new pool already).
 */
const closeWithin = (agent: http.Agent, deadline: Duration.Duration): void => {
  const timer = setTimeout(() => agent.destroy(), Duration.toMillis(deadline))
  timer.unref?.()
  void drain(agent).finally(() => clearTimeout(timer))
}

/**
 * Pools made by `poolFor` for the certificates of the credentials requests are made with; `shared`
 * serves credentials without one. The latest pool is destroyed with the scope.
 */
export const makeCertificatePools = (
  poolFor: (certificate: Certificate) => http.Agent,
  shared: http.Agent,
  requestTimeout: Duration.Duration
): Effect.Effect<CertificatePools, never, Scope.Scope> =>
  Effect.gen(function* () {
    let latest: http.Agent | undefined
    let latestPair: string | undefined
    const watchers = new Set<{ readonly used: () => ExecCredential | undefined; readonly end: () => void }>()

    const retire = (agent: http.Agent | undefined) => {
      if (agent === undefined) return
      for (const watcher of watchers) {
        const pair = pairOf(watcher.used())
        if (pair !== undefined && pair !== latestPair) {
          watchers.delete(watcher)
          watcher.end()
        }
      }
      closeWithin(agent, requestTimeout)
    }

    yield* Effect.addFinalizer(() => Effect.sync(() => latest?.destroy()))

    const agentFor = (credential: ExecCredential): http.Agent => {
      const { clientCertificateData: cert, clientKeyData: key } = credential
      if (cert === undefined || key === undefined) {
        // The plugin went back to tokens: the certificate's pool is no longer needed.
        if (latestPair !== undefined) {
          latestPair = undefined
          retire(latest)
          latest = undefined
        }
        return shared
      }
      const pair = `${cert}\n${key}`
      if (pair !== latestPair || latest === undefined) {
        const previous = latest
        latestPair = pair
        latest = poolFor({ cert, key })
        retire(previous)
      }
      return latest
    }

    const onRetired = (used: () => ExecCredential | undefined, end: () => void): (() => void) => {
      const watcher = { used, end }
      watchers.add(watcher)
      return () => watchers.delete(watcher)
    }

    return { agentFor, onRetired }
  })
