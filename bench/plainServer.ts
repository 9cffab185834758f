/**
 * The least an API server does for a merge patch, as a baseline for bench/client.ts: plain
 * node:http, objects in a Map by path, the body parsed, applied (src/json/mergePatch.ts, as the
 * embedded API server applies it), a new resourceVersion, the result serialised and sent. No
 * authentication, admission, field management, storage history or watches.
 */
import http from "node:http"
import { applyMergePatch } from "../src/json/mergePatch.ts"

type Stored = { metadata: { name: string; resourceVersion?: string } }

const objects = new Map<string, Stored>()
let version = 0

const answer = (response: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const withVersion = (object: Stored): Stored => ({ ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } })

const server = http.createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    // The status subresource is the object itself here.
    const path = (request.url ?? "/").replace(/\/status$/, "")
    const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"))
    if (request.method === "POST") {
      const created = withVersion(body as Stored)
      objects.set(`${path}/${created.metadata.name}`, created)
      return answer(response, 201, created)
    }
    const stored = objects.get(path)
    if (stored === undefined) return answer(response, 404, { kind: "Status", code: 404 })
    if (request.method === "GET") return answer(response, 200, stored)
    if (request.method !== "PATCH") return answer(response, 405, { kind: "Status", code: 405 })
    const patched = withVersion(applyMergePatch(stored, body) as Stored)
    objects.set(path, patched)
    answer(response, 200, patched)
  })
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  console.log(`plain server listening on http://127.0.0.1:${address.port}`)
})
