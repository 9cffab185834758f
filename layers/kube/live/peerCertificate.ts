// The API server's certificate as it presents it, read when a handshake failed for a reason the
// runtime did not name: Deno reports an expired certificate as UNABLE_TO_VERIFY_LEAF_SIGNATURE,
// the code of an unknown CA. Only the handshake happens: the socket is closed before any byte of
// HTTP, so no request and no credential ever goes to a server that is not trusted.
import { isIP } from "node:net"
import tls from "node:tls"
import { Effect, Option } from "effect"

export interface PeerCertificate {
  readonly validFrom: Date
  readonly validTo: Date
}

const probeTimeoutMillis = 5_000

/** The certificate `server` (https://host:port) presents, or none when it cannot be had in time. */
export const peerCertificateOf = (server: string, servername: string | undefined): Effect.Effect<Option.Option<PeerCertificate>> =>
  Effect.callback<Option.Option<PeerCertificate>>((resume) => {
    let url: URL
    try {
      url = new URL(server)
    } catch {
      resume(Effect.succeedNone)
      return
    }
    const host = url.hostname.replace(/^\[|\]$/g, "")
    const socket = tls.connect({
      host,
      port: Number(url.port === "" ? 443 : url.port),
      // Read only: the certificate is looked at, never trusted; the socket ends before anything is sent.
      rejectUnauthorized: false,
      // SNI carries names only, never an address.
      ...(servername !== undefined ? { servername } : isIP(host) === 0 ? { servername: host } : {})
    })
    const done = (result: Option.Option<PeerCertificate>) => {
      socket.destroy()
      resume(Effect.succeed(result))
    }
    socket.setTimeout(probeTimeoutMillis, () => done(Option.none()))
    socket.once("error", () => done(Option.none()))
    socket.once("secureConnect", () => {
      const certificate = socket.getPeerCertificate()
      const validFrom = new Date(certificate.valid_from ?? "")
      const validTo = new Date(certificate.valid_to ?? "")
      done(Number.isNaN(validFrom.getTime()) || Number.isNaN(validTo.getTime()) ? Option.none() : Option.some({ validFrom, validTo }))
    })
    return Effect.sync(() => socket.destroy())
  })
