import { createServer, request as forward } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A registry that throttles (issue 28, part 3): a proxy on 127.0.0.1 before a real registry that
 * answers HTTP 429 as Docker Hub does (`TOOMANYREQUESTS` in the registry error body, and a
 * Retry-After) to the requests `throttles` picks, and forwards the rest untouched.
 */
export interface ThrottlingProxy {
  /** host:port, as in an image reference. */
  readonly host: string
  /** Which requests get a 429 (method and path, e.g. `GET /v2/app/manifests/v1`). */
  throttles: (method: string, path: string) => boolean
  /** Requests answered 429 so far, as `METHOD path`. */
  readonly throttled: Array<string>
  readonly close: () => Promise<void>
}

/** Docker Hub's words for its pull rate limit. */
export const rateLimitBody = JSON.stringify({
  errors: [
    {
      code: "TOOMANYREQUESTS",
      message:
        "You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit"
    }
  ]
})

export const startThrottlingProxy = async (upstream: string): Promise<ThrottlingProxy> => {
  const [upstreamHost, upstreamPort] = upstream.split(":")
  const server = createServer((req, res) => {
    const method = req.method ?? "GET"
    const path = req.url ?? "/"
    if (proxy.throttles(method, path)) {
      proxy.throttled.push(`${method} ${path}`)
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1", "docker-distribution-api-version": "registry/2.0" })
      res.end(method === "HEAD" ? undefined : rateLimitBody)
      return
    }
    const upstreamRequest = forward(
      { host: upstreamHost, port: Number(upstreamPort), method, path, headers: { ...req.headers, host: upstream } },
      (upstreamResponse) => {
        res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers)
        upstreamResponse.pipe(res)
      }
    )
    upstreamRequest.on("error", () => {
      res.writeHead(502)
      res.end()
    })
    req.pipe(upstreamRequest)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const proxy: ThrottlingProxy = {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    throttles: () => false,
    throttled: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return proxy
}
