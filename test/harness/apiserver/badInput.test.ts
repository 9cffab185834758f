// Bad input at the embedded API server's HTTP boundary (issue 13): each gets the status code
// kube-apiserver gives, and the server keeps serving afterwards.
import * as http from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { imagePullJob, ipjPath, namespace, request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const limit = 3 * 1024 * 1024

/** The server still answers a plain list: what every test here ends with. */
const stillServing = async () => {
  const listed = await request(server, "/api/v1/namespaces")
  expect(listed.status).toBe(200)
}

/** Raw HTTP over a socket: the answer's status and body, and how many body bytes were sent before it came. */
const rawExchange = (head: string, chunks: ReadonlyArray<Buffer>, totalBytes: number) =>
  new Promise<{ readonly status: number; readonly text: string; readonly sent: number }>((done, fail) => {
    const { port, hostname } = new URL(server.url)
    const socket = connect(Number(port), hostname)
    let answer = ""
    let sent = 0
    let answered = false
    socket.on("error", (error) => (answered ? undefined : fail(error)))
    // Refusing a body means closing the connection, not draining the rest of it under keep-alive.
    const lingering = setTimeout(() => {
      socket.destroy()
      fail(new Error(`the connection stayed open 10 s after the answer: ${answer.split("\r\n")[0]}`))
    }, 10_000)
    socket.on("data", (data) => {
      answer += data.toString("utf8")
      answered = true
    })
    socket.on("close", () => {
      clearTimeout(lingering)
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 0)
      done({ status, text: answer.slice(answer.indexOf("\r\n\r\n") + 4), sent })
    })
    socket.write(head)
    // Sends up to totalBytes of the body in chunks, stopping as soon as the server answered.
    const pump = () => {
      while (!answered && sent < totalBytes && !socket.destroyed) {
        const chunk = chunks[(sent / chunks[0]!.length) % chunks.length]!
        sent += chunk.length
        if (!socket.write(chunk)) return void socket.once("drain", pump)
      }
      if (sent >= totalBytes) socket.end()
    }
    pump()
  })

describe("request bodies over 3 MiB", () => {
  it("a declared Content-Length over the limit is refused with 413 before the body is read", async () => {
    const ns = await namespace(server)
    const declared = 100 * 1024 * 1024
    const head = `POST ${ipjPath(ns)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`
    const answer = await rawExchange(head, [Buffer.alloc(64 * 1024, 0x20)], declared)
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.text)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Request entity too large: limit is 3145728",
      reason: "RequestEntityTooLarge",
      code: 413
    })
    // The server answered without waiting for (or draining) the 100 MiB.
    expect(answer.sent).toBeLessThan(declared / 2)
    await stillServing()
  })

  it("a chunked body is refused with 413 once it passes the limit, and the rest is not read", async () => {
    const ns = await namespace(server)
    const head = `POST ${ipjPath(ns)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const size = 64 * 1024
    const chunk = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x20), Buffer.from("\r\n")])
    const total = 1000 * chunk.length
    const answer = await rawExchange(head, [chunk], total)
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.text)).toMatchObject({ reason: "RequestEntityTooLarge", code: 413 })
    expect(answer.sent).toBeLessThan(total / 2)
    await stillServing()
  })

  it("a body just under the limit is read (and judged on its content)", async () => {
    const ns = await namespace(server)
    const job = imagePullJob("big", { filler: "x".repeat(limit - 4096) })
    const created = await request(server, ipjPath(ns), { method: "POST", body: job })
    // Read whole and decoded: the unknown field is pruned.
    expect(created.status, created.text.slice(0, 300)).toBe(201)
    expect(created.json.spec.filler).toBeUndefined()
    await stillServing()
  })
})

describe("malformed JSON", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

  it("JSON nested deeper than 10000 levels is refused with 400, as kube-apiserver's decoder does", async () => {
    const ns = await namespace(server)
    const body =
      `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ImagePullJob","metadata":{"name":"deep"},` +
      `"spec":{"image":"busybox","x":${nested(100_000)}}}`
    const created = await request(server, ipjPath(ns), { method: "POST", body })
    expect(created.status).toBe(400)
    expect(created.json).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 })
    expect(created.json.message).toContain("exceeded max depth")
    await stillServing()
  })

  it("JSON nested within the limit is decoded; unknown nested fields are pruned as usual", async () => {
    const ns = await namespace(server)
    const body =
      `{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ImagePullJob","metadata":{"name":"nested"},` +
      `"spec":{"image":"busybox","x":${nested(5000)}}}`
    const created = await request(server, ipjPath(ns), { method: "POST", body })
    expect(created.status, created.text).toBe(201)
    expect(created.json.spec.x).toBeUndefined()
    await stillServing()
  })

  it("invalid UTF-8 becomes U+FFFD as in Go's decoder: accepted in a value, refused (422) in a name", async () => {
    const ns = await namespace(server)
    const post = (name: Buffer, value: Buffer) =>
      new Promise<{ status: number; json: any }>((done, fail) => {
        const body = Buffer.concat([
          Buffer.from(`{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ImagePullJob","metadata":{"name":"`),
          name,
          Buffer.from(`","annotations":{"a":"`),
          value,
          Buffer.from(`"}},"spec":{"image":"busybox"}}`)
        ])
        const req = http.request(
          `${server.url}${ipjPath(ns)}`,
          {
            method: "POST",
            headers: { "content-type": "application/json", "content-length": body.length }
          },
          (response) => {
            const chunks: Array<Buffer> = []
            response.on("data", (c: Buffer) => chunks.push(c))
            response.on("end", () => done({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
          }
        )
        req.on("error", fail)
        req.end(body)
      })
    const bad = Buffer.from([0xc3, 0x28, 0xff])
    const inValue = await post(Buffer.from("utf8-value"), bad)
    expect(inValue.status).toBe(201)
    expect(inValue.json.metadata.annotations.a).toBe("\uFFFD(\uFFFD")
    const inName = await post(Buffer.concat([Buffer.from("a"), bad]), Buffer.from("ok"))
    expect(inName.status).toBe(422)
    expect(inName.json).toMatchObject({ reason: "Invalid", code: 422 })
    await stillServing()
  })
})

describe("watches", () => {
  it("a watch on an unknown resource is 404 with a NotFound Status", async () => {
    const answer = await request(server, "/apis/apps.kruise.io/v1alpha1/nosuchthings?watch=true")
    expect(answer.status).toBe(404)
    expect(answer.json).toMatchObject({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 })
    const core = await request(server, "/api/v1/nosuchthings?watch=true")
    expect(core.status).toBe(404)
    await stillServing()
  })

  it("2000 concurrent watches from one client: the server keeps answering lists and delivers events", async () => {
    const ns = await namespace(server)
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
    const count = 2000
    const opened: Array<http.ClientRequest> = []
    const firstEvents: Array<Promise<string>> = []
    try {
      const started = Array.from(
        { length: count },
        () =>
          new Promise<void>((ready, fail) => {
            const req = http.get(`${server.url}${ipjPath(ns)}?watch=true`, { agent }, (response) => {
              expect(response.statusCode).toBe(200)
              firstEvents.push(new Promise((seen) => response.once("data", (data: Buffer) => seen(data.toString("utf8")))))
              ready()
            })
            req.on("error", (error) => (opened.includes(req) ? undefined : fail(error)))
            opened.push(req)
          })
      )
      await Promise.all(started)
      await stillServing()
      const created = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("seen-by-all") })
      expect(created.status).toBe(201)
      const events = await Promise.all(firstEvents)
      expect(events.filter((event) => event.includes("seen-by-all"))).toHaveLength(count)
    } finally {
      for (const req of opened) req.destroy()
      agent.destroy()
    }
    await stillServing()
  }, 60_000)
})
