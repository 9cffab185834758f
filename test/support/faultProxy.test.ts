// The fault proxy of the whole-system fault tests does what each fault says, against a plain upstream.
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { FaultProxy, isWrite } from "./faultProxy.ts"

let upstream: http.Server
let proxy: FaultProxy
const events = ['{"type":"ADDED","object":{"n":1}}\n', '{"type":"ADDED","object":{"n":2}}\n', '{"type":"ADDED","object":{"n":3}}\n']

beforeAll(async () => {
  upstream = http.createServer((request, response) => {
    if ((request.url ?? "").includes("watch=true")) {
      response.writeHead(200, { "content-type": "application/json" })
      response.flushHeaders()
      let i = 0
      const timer = setInterval(() => {
        if (i < events.length) response.write(events[i++])
        else {
          clearInterval(timer)
          response.end()
        }
      }, 20)
      response.on("close", () => clearInterval(timer))
      return
    }
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const body = JSON.stringify({
        method: request.method,
        url: request.url,
        body: Buffer.concat(chunks).toString(),
        pad: "x".repeat(10_000)
      })
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
    })
  })
  await new Promise<void>((done) => upstream.listen(0, "127.0.0.1", () => done()))
  proxy = await FaultProxy.start(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`)
})
afterAll(async () => {
  await proxy.stop()
  await new Promise<void>((done) => upstream.close(() => done()))
})
afterEach(() => {
  proxy.clear()
  proxy.resetCounts()
})

const get = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${proxy.url}${path}`, init)
  return { status: response.status, headers: response.headers, text: await response.text() }
}

describe("FaultProxy", () => {
  it("passes requests through and counts lists and watches", async () => {
    const listed = await get("/api/v1/nodes")
    expect(listed.status).toBe(200)
    expect(JSON.parse(listed.text)).toMatchObject({ method: "GET", url: "/api/v1/nodes" })
    const posted = await get("/api/v1/namespaces/a/configmaps", { method: "POST", body: '{"a":1}' })
    expect(JSON.parse(posted.text)).toMatchObject({ method: "POST", body: '{"a":1}' })
    await get("/api/v1/nodes/n1")
    const watched = await get("/api/v1/nodes?watch=true")
    expect(watched.text).toBe(events.join(""))
    expect(proxy.counts).toMatchObject({ requests: 4, lists: 1, watches: 1, retries: 0 })
  })

  it("throttles with 429, Retry-After and a Status body; a repeat sooner than asked is an early retry", async () => {
    proxy.set({ fault: { kind: "throttle", retryAfterSeconds: 1 } })
    const throttled = await get("/api/v1/nodes")
    expect(throttled.status).toBe(429)
    expect(throttled.headers.get("retry-after")).toBe("1")
    expect(JSON.parse(throttled.text)).toMatchObject({
      kind: "Status",
      reason: "TooManyRequests",
      code: 429,
      details: { retryAfterSeconds: 1 }
    })
    await get("/api/v1/nodes")
    expect(proxy.counts.retries).toBe(1)
    expect(proxy.counts.earlyRetries).toHaveLength(1)
    proxy.clear()
    await new Promise((done) => setTimeout(done, 1_050))
    expect((await get("/api/v1/nodes")).status).toBe(200)
    expect(proxy.counts.retries).toBe(2)
    expect(proxy.counts.earlyRetries).toHaveLength(1)
  })

  it("tells clients apart by the address they use: one's request does not count as another's retry", async () => {
    proxy.set({ fault: { kind: "throttle", retryAfterSeconds: 5 } })
    expect((await get("/api/v1/nodes")).status).toBe(429)
    proxy.clear()
    const other = await proxy.urlFor("other")
    expect((await fetch(`${other}/api/v1/nodes`)).status).toBe(200)
    expect(proxy.counts).toMatchObject({ requests: 2, retries: 0, earlyRetries: [] })
  })

  it("answers 500 and 503 with Status bodies, to the share of matching requests asked", async () => {
    proxy.set({ fault: { kind: "error", code: 503 }, match: isWrite, share: 0.5 })
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await get("/api/v1/namespaces/a/configmaps", { method: "POST", body: "{}" })).status)
    expect(statuses).toEqual([200, 503, 200, 503])
    expect((await get("/api/v1/nodes")).status).toBe(200)
    proxy.set({ fault: { kind: "error", code: 500 } })
    const failed = await get("/api/v1/nodes")
    expect(failed.status).toBe(500)
    expect(JSON.parse(failed.text)).toMatchObject({ reason: "InternalError", code: 500 })
    expect(proxy.counts.faulted).toEqual({ error503: 2, error500: 1 })
  })

  it("delays requests by the latency asked", async () => {
    proxy.set({ fault: { kind: "latency", minMs: 300, maxMs: 400 } })
    const started = Date.now()
    expect((await get("/api/v1/nodes")).status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(300)
  })

  it("resets a connection in the middle of a response", async () => {
    proxy.set({ fault: { kind: "reset" } })
    await expect(get("/api/v1/nodes")).rejects.toThrow()
    expect(proxy.counts.faulted).toEqual({ reset: 1 })
  })

  it("ends a watch early after whole events, or in the middle of the next one", async () => {
    proxy.set({ fault: { kind: "cutWatch", afterEvents: 1, midEvent: false } })
    const early = await get("/api/v1/nodes?watch=true")
    expect(early.text).toBe(events[0])
    proxy.set({ fault: { kind: "cutWatch", afterEvents: 2, midEvent: true } })
    const response = await fetch(`${proxy.url}/api/v1/nodes?watch=true`)
    let received = ""
    const reader = response.body!.getReader()
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          received += new TextDecoder().decode(value)
        }
      })()
    ).rejects.toThrow()
    expect(received.startsWith(events[0]! + events[1]!)).toBe(true)
    expect(received.length).toBeGreaterThan(events[0]!.length + events[1]!.length)
    expect(received.length).toBeLessThan(events.join("").length)
  })

  it("a watch fault ends the watches already open, so that their next request meets it", async () => {
    const response = await fetch(`${proxy.url}/api/v1/nodes?watch=true`)
    const text = response.text()
    await new Promise((done) => setTimeout(done, 30))
    proxy.set({ fault: { kind: "cutWatch", afterEvents: 0, midEvent: false } })
    expect(events.join("").startsWith(await text)).toBe(true)
    expect((await text).length).toBeLessThan(events.join("").length)
  })

  it("goes fully down (connections refused, open ones cut) and comes back on the same port", async () => {
    const port = proxy.port
    const response = await fetch(`${proxy.url}/api/v1/nodes?watch=true`)
    const reading = response.text()
    await proxy.down()
    await expect(reading).rejects.toThrow()
    await expect(get("/api/v1/nodes")).rejects.toThrow()
    await proxy.up()
    expect(proxy.port).toBe(port)
    expect((await get("/api/v1/nodes")).status).toBe(200)
  })
})
