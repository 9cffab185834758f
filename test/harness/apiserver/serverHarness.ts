// Starts an embedded API server for a test file and talks to it over HTTP as clients do.
import { Effect, Exit, Scope } from "effect"
import { startEmbeddedApiServer } from "../../../harness/apiserver/embeddedApiServer.ts"
import type { EmbeddedApiServer, EmbeddedApiServerOptions } from "../../../harness/apiserver/embeddedApiServer.ts"

export interface RunningServer extends EmbeddedApiServer {
  readonly close: () => Promise<void>
}

export const startServer = async (options: EmbeddedApiServerOptions = {}): Promise<RunningServer> => {
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(startEmbeddedApiServer(options).pipe(Scope.provide(scope)))
  return { ...server, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // Tests read into answers freely: a wrong shape fails the assertion that reads it.
  readonly json: any
}

export interface RequestOptions {
  readonly method?: string
  readonly body?: unknown
  readonly contentType?: string
  readonly accept?: string
  readonly token?: string
}

export const request = async (server: { readonly url: string }, path: string, options: RequestOptions = {}): Promise<Answer> => {
  const headers: Record<string, string> = {}
  if (options.accept !== undefined) headers["accept"] = options.accept
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  let body: string | undefined
  if (options.body !== undefined) {
    headers["content-type"] = options.contentType ?? "application/json"
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
  }
  const response = await fetch(`${server.url}${path}`, {
    method: options.method ?? "GET",
    headers,
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

export interface WatchEventLine {
  readonly type: string
  readonly object: any
}

/** An open watch: its status and headers at once, then its events one by one. */
export interface OpenWatch {
  readonly status: number
  readonly headers: Headers
  /** The next event, or undefined when the stream ended; fails after `timeoutMs`. */
  readonly next: (timeoutMs?: number) => Promise<WatchEventLine | undefined>
  readonly close: () => void
}

export const watch = async (
  server: { readonly url: string },
  path: string,
  options: { readonly accept?: string } = {}
): Promise<OpenWatch> => {
  const controller = new AbortController()
  const response = await fetch(`${server.url}${path}`, {
    signal: controller.signal,
    headers: options.accept === undefined ? {} : { accept: options.accept }
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let ended = false
  const next = async (timeoutMs = 5000): Promise<WatchEventLine | undefined> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const newline = buffer.indexOf("\n")
      if (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        return JSON.parse(line) as WatchEventLine
      }
      if (ended) return undefined
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms`)
      let timer: ReturnType<typeof setTimeout> | undefined
      const chunk = await Promise.race([
        reader.read(),
        new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), left)
        })
      ])
      clearTimeout(timer)
      if (chunk === "timeout") throw new Error(`no watch event within ${timeoutMs} ms`)
      if (chunk.done) ended = true
      else buffer += decoder.decode(chunk.value, { stream: true })
    }
  }
  return { status: response.status, headers: response.headers, next, close: () => controller.abort() }
}

let counter = 0
/** A name no other test of the run uses. */
export const unique = (prefix: string): string => `${prefix}-${process.pid}-${++counter}`

export const kruise = "apps.kruise.io/v1alpha1"
export const ipjPath = (namespace: string, name = "") =>
  `/apis/apps.kruise.io/v1alpha1/namespaces/${namespace}/imagepulljobs${name === "" ? "" : `/${name}`}`

export const imagePullJob = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: kruise,
  kind: "ImagePullJob",
  metadata: { name, ...metadata },
  spec: { image: "nginx:1.25", ...spec }
})

/** A namespace of the test's own, created over HTTP. */
export const namespace = async (server: { readonly url: string }, prefix = "test"): Promise<string> => {
  const name = unique(prefix)
  const created = await request(server, "/api/v1/namespaces", {
    method: "POST",
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name } }
  })
  if (created.status !== 201) throw new Error(`namespace ${name}: ${created.text}`)
  return name
}
