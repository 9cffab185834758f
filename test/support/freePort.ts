import { createServer } from "node:net"

/**
 * A port free on 127.0.0.1 now, for a child process or a server started later to bind; the small
 * race until it does is acceptable on a test or benchmark machine.
 */
export const freePort = (): Promise<number> =>
  new Promise<number>((done, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => done(port))
    })
  })
