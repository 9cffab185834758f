// Connection pools for the client certificates an exec plugin hands out. client-go closes every
// connection when the certificate changes; here new requests get a pool carrying the new one and
// the old pool is closed gracefully: requests under way on it finish there, and watches on it are
// told to end cleanly, to be resumed at once on the new pool (a watch may otherwise hold the old
// certificate's connection for ten minutes); what is left on it after the request timeout is cut. Requests are given one stable object that hands each
// dispatch to the latest pool, so a request authenticated just before a rotation never lands on a
// pool already closing.
import { RequestContext } from "@kubernetes/client-node"
import type { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import type { ExecCredential } from "./execCredentials/execCredential.ts"
import { withoutExecPlugin } from "./execCredentials/execAuthentication.ts"

export type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>

export interface CertificatePools {
  /** The pool for requests made with `credential`: the shared one when it carries no client certificate. */
  readonly dispatcherFor: (credential: ExecCredential) => Promise<Dispatcher | undefined>
  /**
   * Calls `end` once the certificate of the credential `used()` returns (the one a watch was made
   * with, known once it authenticated) is replaced; the result unregisters.
   */
  readonly onRetired: (used: () => ExecCredential | undefined, end: () => void) => () => void
}

const pairOf = (credential: ExecCredential | undefined): string | undefined =>
  credential?.clientCertificateData === undefined || credential.clientKeyData === undefined
    ? undefined
    : `${credential.clientCertificateData}\n${credential.clientKeyData}`

/** What client-node builds for the cluster with this client certificate (its CA, server name, proxy). */
const buildPool = async (config: KubeConfig, server: string, cert: string, key: string): Promise<Dispatcher> => {
  const probe = new RequestContext(server, "GET")
  await withoutExecPlugin(config, { cert, key }).applySecurityAuthentication(probe)
  const dispatcher = probe.getDispatcher()
  if (dispatcher === undefined) throw new Error("client-node built no connection pool for a client certificate")
  return dispatcher
}

/**
 * Closes a retired pool once its requests are done, and at the latest after `deadline`: by then
 * every request under way on it was abandoned (the request timeout), so what still holds a
 * connection is a watch whose answer never began. client-node's Watch hands out its abort only
 * once the answer begins, so such a watch (ended and resumed on the new pool already) would keep
 * the old certificate's connection until its first event or its idle timeout, minutes later. The
 * bundles' pools (undiciOverNodeHttp.ts) cut it; undici's own Agent, which the sources run on,
 * lets go of its connections once closing, so there it stays as before.
 */
const closeWithin = (dispatcher: Dispatcher, deadline: Duration.Duration): void => {
  const timer = setTimeout(() => void dispatcher.destroy().catch(() => undefined), Duration.toMillis(deadline))
  timer.unref?.()
  dispatcher.close().then(
    () => clearTimeout(timer),
    () => clearTimeout(timer)
  )
}

/**
 * Pools over `config` (whose user's exec plugin is left to the caller) for the certificates of
 * the credentials requests are made with; `shared` serves credentials without one. The latest
 * pool is destroyed with the scope.
 */
export const makeCertificatePools = (
  config: KubeConfig,
  server: string,
  shared: Dispatcher | undefined,
  requestTimeout: Duration.Duration
): Effect.Effect<CertificatePools, never, Scope.Scope> =>
  Effect.gen(function* () {
    let latest: Dispatcher | undefined
    let latestPair: string | undefined
    let building: Promise<void> = Promise.resolve()
    const watchers = new Set<{ readonly used: () => ExecCredential | undefined; readonly end: () => void }>()

    // Both fetches client-node may run on: undici's calls dispatch(), undiciOverNodeHttp.ts's agentFor().
    const rotating = {
      dispatch: (...args: ReadonlyArray<unknown>): unknown =>
        (latest as unknown as { dispatch: (...a: ReadonlyArray<unknown>) => unknown }).dispatch(...args),
      agentFor: (url: URL): unknown => (latest as unknown as { agentFor: (url: URL) => unknown }).agentFor(url)
    } as unknown as Dispatcher

    const retire = (dispatcher: Dispatcher | undefined) => {
      if (dispatcher === undefined) return
      for (const watcher of watchers) {
        const pair = pairOf(watcher.used())
        if (pair !== undefined && pair !== latestPair) {
          watchers.delete(watcher)
          watcher.end()
        }
      }
      closeWithin(dispatcher, requestTimeout)
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => (latest === undefined ? Promise.resolve() : latest.destroy().catch(() => undefined)))
    )

    const dispatcherFor = async (credential: ExecCredential): Promise<Dispatcher | undefined> => {
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
      if (pair !== latestPair) {
        latestPair = pair
        building = buildPool(config, server, cert, key).then(
          (dispatcher) => {
            // A newer certificate arrived while this one's pool was built: this one is already stale.
            if (latestPair !== pair) return retire(dispatcher)
            const previous = latest
            latest = dispatcher
            retire(previous)
          },
          (error: unknown) => {
            if (latestPair === pair) latestPair = undefined
            throw error
          }
        )
      }
      await building
      return rotating
    }

    const onRetired = (used: () => ExecCredential | undefined, end: () => void): (() => void) => {
      const watcher = { used, end }
      watchers.add(watcher)
      return () => watchers.delete(watcher)
    }

    return { dispatcherFor, onRetired }
  })
