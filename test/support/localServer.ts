/**
 * A test's own HTTP or HTTPS server on 127.0.0.1, at a port the system picks: the API servers,
 * fronts and registries that tests of the live client stand up (certificates from testPki.ts).
 */
import http from "node:http"
import https from "node:https"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import type { Scope } from "effect"

export interface LocalServer<S extends http.Server = http.Server> {
  /** `http://127.0.0.1:PORT`, or `https://` over TLS. */
  readonly url: string
  readonly port: number
  readonly server: S
  /** Ends the open connections and stops listening. */
  readonly close: () => Promise<void>
}

/** Listens with `handler`: over TLS with `tls` (the certificate, key and what clients must show), else plain HTTP. */
export function listenLocally(handler: http.RequestListener): Promise<LocalServer<http.Server>>
export function listenLocally(handler: http.RequestListener, tls: https.ServerOptions): Promise<LocalServer<https.Server>>
export function listenLocally(handler: http.RequestListener, tls?: https.ServerOptions): Promise<LocalServer> {
  const server = tls === undefined ? http.createServer(handler) : https.createServer(tls, handler)
  return new Promise((done, fail) => {
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", fail)
      const { port } = server.address() as AddressInfo
      done({
        url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
        port,
        server,
        close: () =>
          new Promise<void>((closed) => {
            server.closeAllConnections()
            server.close(() => closed())
          })
      })
    })
  })
}

/** {@link listenLocally} as a resource of the scope: closed when the scope closes. */
export function localServer(handler: http.RequestListener): Effect.Effect<LocalServer<http.Server>, never, Scope.Scope>
export function localServer(
  handler: http.RequestListener,
  tls: https.ServerOptions
): Effect.Effect<LocalServer<https.Server>, never, Scope.Scope>
export function localServer(handler: http.RequestListener, tls?: https.ServerOptions): Effect.Effect<LocalServer, never, Scope.Scope> {
  return Effect.acquireRelease(
    Effect.promise(() => (tls === undefined ? listenLocally(handler) : listenLocally(handler, tls))),
    (server) => Effect.promise(server.close)
  )
}
