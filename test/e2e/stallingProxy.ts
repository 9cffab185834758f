import { createServer, type IncomingMessage, request as forward, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"

/**
 * A registry whose blobs stall or trickle (issue 39, part 4): a proxy on 127.0.0.1 before a real
 * registry. A stalled blob's GET passes its first bytes through and then sends nothing more,
 * holding the connection open, as a registry or a link that hangs mid-layer does; a trickled one
 * is sent slowly but steadily. Everything else is forwarded untouched. Each blob GET is recorded
 * with its Range header and the bytes it sent, to tell a resumed download from one started over.
 */
export interface BlobRequest {
  readonly digest: string
  /** The request's Range header (`bytes=N-` when the client resumes). */
  readonly range: string | undefined
  readonly status: number
  /** Bytes of the body sent so far. */
  sent: number
  end: "sending" | "complete" | "stalled" | "closed by the client"
  /** Date.now() when the last byte of a complete body was sent. */
  completedAt?: number
}

export interface StallingProxy {
  /** host:port, as in an image reference. */
  readonly host: string
  /** The next `times` GETs of the blob send `afterBytes` bytes of the body, then nothing, the connection held open. */
  readonly stallBlob: (digest: string, afterBytes: number, times?: number) => void
  /** GETs of the blob are sent at about `bytesPerSecond`, in tenths of a second. */
  readonly trickleBlob: (digest: string, bytesPerSecond: number) => void
  readonly blobRequests: Array<BlobRequest>
  readonly close: () => Promise<void>
}

const complete = (record: BlobRequest) => {
  record.end = "complete"
  record.completedAt = Date.now()
}

const blobDigest = (path: string): string | undefined => /\/blobs\/(sha256:[a-f0-9]{64})$/.exec(path)?.[1]

export const startStallingProxy = async (upstream: string): Promise<StallingProxy> => {
  const [upstreamHost, upstreamPort] = upstream.split(":")
  const stalls = new Map<string, { afterBytes: number; times: number }>()
  const trickles = new Map<string, number>()
  const blobRequests: Array<BlobRequest> = []

  /** Sends the upstream body as told for its digest, recording what went out. */
  const relay = async (digest: string, upstreamResponse: IncomingMessage, res: ServerResponse, record: BlobRequest) => {
    const stall = stalls.get(digest)
    const stallAt = stall !== undefined && stall.times > 0 ? stall.afterBytes : undefined
    if (stall !== undefined && stallAt !== undefined) stall.times -= 1
    const rate = trickles.get(digest)
    const length = Number(upstreamResponse.headers["content-length"])
    res.on("close", () => {
      if (record.end === "sending") record.end = "closed by the client"
    })
    for await (const chunk of upstreamResponse as AsyncIterable<Buffer>) {
      const pieces = rate === undefined ? [chunk] : split(chunk, Math.max(1, Math.floor(rate / 10)))
      for (const [i, piece] of pieces.entries()) {
        if (rate !== undefined && (i > 0 || record.sent > 0)) await sleep(100)
        if (record.end !== "sending") return
        if (stallAt !== undefined && record.sent + piece.length >= stallAt) {
          res.write(piece.subarray(0, stallAt - record.sent))
          record.sent = stallAt
          record.end = "stalled"
          upstreamResponse.destroy()
          return
        }
        record.sent += piece.length
        // Said before the last byte goes, so that the client cannot be done with it sooner.
        if (record.sent === length) complete(record)
        res.write(piece)
      }
    }
    if (record.end === "sending") complete(record)
    res.end()
  }

  const server = createServer((req, res) => {
    const method = req.method ?? "GET"
    const path = req.url ?? "/"
    const digest = method === "GET" ? blobDigest(path) : undefined
    const upstreamRequest = forward(
      { host: upstreamHost, port: Number(upstreamPort), method, path, headers: { ...req.headers, host: upstream } },
      (upstreamResponse) => {
        res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers)
        if (digest === undefined) {
          upstreamResponse.pipe(res)
          return
        }
        const range = req.headers.range
        const record: BlobRequest = { digest, range, status: upstreamResponse.statusCode ?? 502, sent: 0, end: "sending" }
        blobRequests.push(record)
        relay(digest, upstreamResponse, res, record).catch(() => res.destroy())
      }
    )
    upstreamRequest.on("error", () => {
      res.writeHead(502)
      res.end()
    })
    req.pipe(upstreamRequest)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    stallBlob: (digest, afterBytes, times = 1) => {
      stalls.set(digest, { afterBytes, times })
    },
    trickleBlob: (digest, bytesPerSecond) => {
      trickles.set(digest, bytesPerSecond)
    },
    blobRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const split = (chunk: Buffer, size: number): Array<Buffer> => {
  const pieces: Array<Buffer> = []
  for (let offset = 0; offset < chunk.length; offset += size) pieces.push(chunk.subarray(offset, offset + size))
  return pieces
}
