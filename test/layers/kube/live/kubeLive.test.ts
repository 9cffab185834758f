// The live KubeApi against a tiny HTTP server written here: what goes over the wire (paths, bodies,
// headers, query) and how every answer maps back (typed errors, pages, watch events). The whole
// conformance suite runs against the embedded API server in kubeLiveConformance.test.ts.
import { mkdtempSync, writeFileSync } from "node:fs"
import type http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { KubeConfig } from "@kubernetes/client-node"
import { Duration, Effect, Exit, Fiber, Layer, Stream, Tracer } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { KubeLive, make, makeFromConfig } from "../../../../layers/kube/live/kubeLive.ts"
import type { KubeLiveOptions } from "../../../../layers/kube/live/kubeLive.ts"
import { KubeApi } from "../../../../src/kube/KubeApi.ts"
import type { KubeObject, WatchEvent } from "../../../../src/kube/KubeApi.ts"
import type { KubeError } from "../../../../src/kube/errors.ts"
import { loadKubeConfig } from "../../../../layers/kube/live/kubeConfig.ts"
import { makeRateLimiter } from "../../../../layers/kube/live/rateLimiter.ts"
import { makeTransport } from "../../../../layers/kube/live/transport.ts"
import { watchStream } from "../../../../layers/kube/live/watchStream.ts"
import { resources } from "../../../../src/kube/resources.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { eventually } from "../../../support/eventually.ts"
import { freePort } from "../../../support/freePort.ts"
import { localServer } from "../../../support/localServer.ts"

const token = "s3cr3t-t0ken-VALUE"
const kruise = "/apis/apps.kruise.io/v1alpha1"

// ---- the fake API server -----------------------------------------------------------------------

interface Received {
  readonly method: string
  readonly url: URL
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

type Handler = (request: Received, response: http.ServerResponse, raw: http.IncomingMessage) => void

interface FakeServer {
  readonly url: string
  readonly received: Array<Received>
  /** Requests whose connection has closed, by index in `received`. */
  readonly closed: Set<number>
  readonly kubeconfig: string
}

const json = (response: http.ServerResponse, status: number, body: unknown): void => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const status = (code: number, reason: string, message: string, causes?: ReadonlyArray<Record<string, string>>) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  code,
  ...(causes === undefined ? {} : { details: { causes } })
})

const kubeconfigYaml = (server: string, options: { readonly skipTls?: boolean } = {}): string => `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${server}
${options.skipTls === false ? "" : "    insecure-skip-tls-verify: true\n"}- name: other
  cluster:
    server: http://127.0.0.1:1
    insecure-skip-tls-verify: true
users:
- name: tester
  user:
    token: ${token}
contexts:
- name: fake
  context: {cluster: fake, user: tester}
- name: other
  context: {cluster: other, user: tester}
current-context: fake
`

const writeKubeconfig = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), "preheat-kubelive-")), "config")
  writeFileSync(path, text)
  return path
}

/** A server on 127.0.0.1:0 answering with `handler`, and a kubeconfig (token, skip TLS verify) for it. */
const fakeServer = (handler: Handler): Effect.Effect<FakeServer, never, Scope.Scope> => {
  const received: Array<Received> = []
  const closed = new Set<number>()
  return Effect.map(
    localServer((raw, response) => {
      const chunks: Array<Buffer> = []
      raw.on("data", (chunk: Buffer) => chunks.push(chunk))
      raw.on("end", () => {
        const index = received.length
        const request = {
          method: raw.method ?? "",
          url: new URL(raw.url ?? "/", "http://fake"),
          headers: raw.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        received.push(request)
        response.on("close", () => closed.add(index))
        handler(request, response, raw)
      })
    }),
    ({ url }) => ({ url, received, closed, kubeconfig: writeKubeconfig(kubeconfigYaml(url)) })
  )
}

/** A port nothing listens on (any more), so connecting is refused. */
const closedPort: Effect.Effect<number> = Effect.promise(freePort)

const options = (fake: FakeServer, extra: Partial<KubeLiveOptions> = {}): KubeLiveOptions => ({
  kubeconfig: fake.kubeconfig,
  qps: 1000,
  burst: 1000,
  userAgent: "preheat-test/1",
  // How each single answer maps; the client's own retries are liveRetries.test.ts's.
  maxRetries: 0,
  ...extra
})

/** A live KubeApi on a fake server answering with `handler`. */
const liveApi = (handler: Handler, extra: Partial<KubeLiveOptions> = {}) =>
  Effect.gen(function* () {
    const fake = yield* fakeServer(handler)
    const api = yield* make(options(fake, extra))
    return { fake, api }
  })

/** Real time passes (the fake server lives outside Effect's clock) until `check` holds. */
const until = (check: () => boolean, what: string): Effect.Effect<void> =>
  Effect.promise(() => eventually(what, () => (check() ? true : undefined), 5_000, 10))

const object = (name: string, namespace?: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, ...(namespace === undefined ? {} : { namespace }), uid: `uid-${name}`, resourceVersion: "5" },
  spec: { image: "nginx:1.25" }
})

const last = (fake: FakeServer): Received => {
  const request = fake.received[fake.received.length - 1]
  if (request === undefined) throw new Error("no request received")
  return request
}

const noCredentials = (error: unknown): void => {
  const text = `${String(error)} ${JSON.stringify(error)}`
  assert.notInclude(text, token)
  assert.notMatch(text, /Bearer [^\s[]/)
}

// ---- configuration -----------------------------------------------------------------------------

describe("kubeconfig", () => {
  it.live("an http server with insecure-skip-tls-verify is used with the user's token and our user agent", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi((_, response) => json(response, 200, object("job", "ns")))
      const got = yield* api.get(resources.imagePullJob, { name: "job", namespace: "ns" })
      assert.strictEqual(got.metadata.name, "job")
      const request = last(fake)
      assert.strictEqual(request.method, "GET")
      assert.strictEqual(request.url.pathname, `${kruise}/namespaces/ns/imagepulljobs/job`)
      assert.strictEqual(request.headers.authorization, `Bearer ${token}`)
      assert.strictEqual(request.headers["user-agent"], "preheat-test/1")
      assert.strictEqual(request.headers.accept, "application/json")
    })
  )

  it.live("an http server without insecure-skip-tls-verify is refused when the layer is built", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, {}))
      const kubeconfig = writeKubeconfig(kubeconfigYaml(fake.url, { skipTls: false }))
      const error = yield* Effect.flip(make(options(fake, { kubeconfig })))
      assert.strictEqual(error._tag, "KubeConfigError")
      assert.include(error.message, "skipTLSVerify")
      assert.lengthOf(fake.received, 0)
    })
  )

  it.live("a context is selected by name; an unknown one is named with those there are", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, {}))
      const other = yield* loadKubeConfig({ kubeconfig: fake.kubeconfig, context: "other" })
      assert.strictEqual(other.getCurrentCluster()?.server, "http://127.0.0.1:1")
      const error = yield* Effect.flip(loadKubeConfig({ kubeconfig: fake.kubeconfig, context: "nope" }))
      assert.include(error.message, `context "nope"`)
      assert.include(error.message, "fake, other")
    })
  )

  it.live("$KUBECONFIG is read when no path is given; with nothing to read the error says where to look", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, {}))
      const fromEnv = yield* loadKubeConfig({}, { KUBECONFIG: fake.kubeconfig })
      assert.strictEqual(fromEnv.getCurrentCluster()?.server, fake.url)
      const emptyHome = mkdtempSync(join(tmpdir(), "preheat-home-"))
      const error = yield* Effect.flip(loadKubeConfig({}, { HOME: emptyHome }))
      assert.include(error.message, "--kubeconfig")
      const missing = yield* Effect.flip(loadKubeConfig({ kubeconfig: join(emptyHome, "absent") }))
      assert.include(missing.message, "cannot load the kubeconfig")
    })
  )

  it.live("a broken kubeconfig is reported without quoting its lines (which may hold a token)", () =>
    Effect.gen(function* () {
      const path = writeKubeconfig(`users:\n- name: x\n  user:\n    token: ${token}\n   bad: [indent\n`)
      const error = yield* Effect.flip(loadKubeConfig({ kubeconfig: path }))
      assert.strictEqual(error._tag, "KubeConfigError")
      noCredentials(error)
    })
  )

  it.live("an auth provider is asked for its token before every request, so it can refresh it (gcp's cmd-path here)", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, object("job", "ns")))
      const dir = mkdtempSync(join(tmpdir(), "preheat-auth-provider-"))
      const command = join(dir, "refresh.sh")
      // Each run hands out a new token that has already expired, so every request runs it again.
      writeFileSync(
        command,
        `#!/bin/sh\nn=$(( $(cat ${dir}/runs 2>/dev/null || echo 0) + 1 ))\necho $n > ${dir}/runs\n` +
          `printf '{"token":"refreshed-%s","expiry":"2000-01-01T00:00:00Z"}' $n\n`,
        { mode: 0o755 }
      )
      const kubeconfig = writeKubeconfig(
        kubeconfigYaml(fake.url).replace(
          `    token: ${token}`,
          [
            "    auth-provider:",
            "      name: gcp",
            "      config:",
            `        cmd-path: ${command}`,
            '        token-key: "{.token}"',
            '        expiry-key: "{.expiry}"'
          ].join("\n")
        )
      )
      const api = yield* make(options(fake, { kubeconfig }))
      const seen = fake.received.length
      yield* api.get(resources.imagePullJob, { name: "job", namespace: "ns" })
      yield* api.get(resources.imagePullJob, { name: "job", namespace: "ns" })
      const tokens = fake.received.slice(seen).map((request) => request.headers.authorization)
      // Run 1 when the client was made, then one per request.
      assert.deepStrictEqual(tokens, ["Bearer refreshed-2", "Bearer refreshed-3"])
    })
  )

  it.live("bad rate limits are a configuration error", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, {}))
      const error = yield* Effect.flip(make(options(fake, { qps: 0, burst: 1.5 })))
      assert.include(error.message, "qps must be a positive number")
      assert.include(error.message, "burst must be a positive integer")
    })
  )
})

// ---- requests ----------------------------------------------------------------------------------

describe("requests", () => {
  it.live("status subresource paths and merge patches, for namespaced, cluster-scoped and core kinds", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi((_, response) => json(response, 200, object("x", "ns")))
      yield* api.update(resources.imagePullJob, object("job", "ns"), "status")
      assert.strictEqual(last(fake).method, "PUT")
      assert.strictEqual(last(fake).url.pathname, `${kruise}/namespaces/ns/imagepulljobs/job/status`)

      const patch = { metadata: { resourceVersion: "7" }, status: { desired: 2 } }
      yield* api.patch(resources.nodeImage, { name: "node-1" }, patch, "status")
      assert.strictEqual(last(fake).method, "PATCH")
      assert.strictEqual(last(fake).url.pathname, `${kruise}/nodeimages/node-1/status`)
      assert.strictEqual(last(fake).headers["content-type"], "application/merge-patch+json")
      assert.deepStrictEqual(JSON.parse(last(fake).body), patch)

      yield* api.patch(resources.pod, { name: "p", namespace: "ns" }, { status: { phase: "Running" } }, "status")
      assert.strictEqual(last(fake).url.pathname, "/api/v1/namespaces/ns/pods/p/status")

      yield* api.patch(resources.lease, { name: "l", namespace: "ns" }, { spec: { holderIdentity: "me" } })
      assert.strictEqual(last(fake).url.pathname, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l")

      yield* api.update(resources.nodeImage, { metadata: { name: "node-1", resourceVersion: "3" }, spec: {} })
      assert.strictEqual(last(fake).url.pathname, `${kruise}/nodeimages/node-1`)
      assert.deepStrictEqual(JSON.parse(last(fake).body), {
        metadata: { name: "node-1", resourceVersion: "3" },
        spec: {},
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage"
      })
    })
  )

  it.live("create posts to the collection with apiVersion and kind; a namespaced object needs a namespace", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi((request, response) =>
        json(response, 201, { ...JSON.parse(request.body), metadata: { name: "s", namespace: "ns", uid: "u" } })
      )
      const created = yield* api.create(resources.secret, { metadata: { name: "s", namespace: "ns" }, data: { k: "dg==" } })
      assert.strictEqual(created.metadata.uid, "u")
      assert.strictEqual(last(fake).method, "POST")
      assert.strictEqual(last(fake).url.pathname, "/api/v1/namespaces/ns/secrets")
      assert.deepInclude(JSON.parse(last(fake).body), { apiVersion: "v1", kind: "Secret" })

      const error = yield* Effect.flip(api.create(resources.secret, { metadata: { name: "s" } }))
      assert.strictEqual(error._tag, "Invalid")
      assert.strictEqual(fake.received.length, 1)
    })
  )

  it.live("delete sends the uid precondition as DeleteOptions, and no body without one", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi((_, response) => json(response, 200, { kind: "Status", status: "Success" }))
      yield* api.delete(resources.imagePullJob, { name: "job", namespace: "ns" }, { uid: "uid-1" })
      assert.strictEqual(last(fake).method, "DELETE")
      assert.strictEqual(last(fake).url.pathname, `${kruise}/namespaces/ns/imagepulljobs/job`)
      assert.strictEqual(last(fake).headers["content-type"], "application/json")
      assert.deepStrictEqual(JSON.parse(last(fake).body), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: "uid-1" }
      })
      yield* api.delete(resources.nodeImage, { name: "node-1" })
      assert.strictEqual(last(fake).url.pathname, `${kruise}/nodeimages/node-1`)
      assert.strictEqual(last(fake).body, "")
    })
  )

  it.live("each verb is a span named after the method, annotated with the object it concerns", () => {
    const spans: Array<Tracer.NativeSpan> = []
    const tracer = Tracer.make({
      span(options) {
        const span = new Tracer.NativeSpan(options)
        spans.push(span)
        return span
      }
    })
    return Effect.gen(function* () {
      const { api } = yield* liveApi((request, response) =>
        request.method === "GET" && request.url.pathname.endsWith("/imagepulljobs")
          ? json(response, 200, { kind: "ImagePullJobList", metadata: { resourceVersion: "7" }, items: [] })
          : json(response, 200, object("job", "ns"))
      )
      yield* api.get(resources.imagePullJob, { name: "job", namespace: "ns" })
      yield* api.list(resources.imagePullJob, { namespace: "ns" })
      yield* api.patch(resources.nodeImage, { name: "node-1" }, { spec: {} })
      yield* api.delete(resources.imagePullJob, { name: "job", namespace: "ns" })
      const seen = spans.filter((span) => span.name.startsWith("KubeApi.")).map((span) => [span.name, Object.fromEntries(span.attributes)])
      assert.deepStrictEqual(seen, [
        ["KubeApi.get", { "kube.kind": "ImagePullJob", "kube.name": "job", "kube.namespace": "ns" }],
        ["KubeApi.list", { "kube.kind": "ImagePullJob", "kube.namespace": "ns" }],
        ["KubeApi.patch", { "kube.kind": "NodeImage", "kube.name": "node-1" }],
        ["KubeApi.delete", { "kube.kind": "ImagePullJob", "kube.name": "job", "kube.namespace": "ns" }]
      ])
    }).pipe(Effect.withTracer(tracer))
  })

  it.live("list reads every page with limit and continue, and returns the list's resourceVersion", () =>
    Effect.gen(function* () {
      const pages: Record<string, { readonly items: ReadonlyArray<string>; readonly next: string }> = {
        "": { items: ["a", "b"], next: "page-2" },
        "page-2": { items: ["c", "d"], next: "page-3" },
        "page-3": { items: ["e"], next: "" }
      }
      const { fake, api } = yield* liveApi(
        (request, response) => {
          const page = pages[request.url.searchParams.get("continue") ?? ""]
          if (page === undefined) return json(response, 400, status(400, "BadRequest", "bad continue"))
          json(response, 200, {
            kind: "PodList",
            apiVersion: "v1",
            metadata: { resourceVersion: "42", ...(page.next === "" ? {} : { continue: page.next }) },
            items: page.items.map((name) => ({ metadata: { name, namespace: "ns" } }))
          })
        },
        { listPageSize: 2 }
      )
      const list = yield* api.list(resources.pod, { namespace: "ns", labelSelector: "app=x", fieldSelector: "spec.nodeName=n1" })
      assert.deepStrictEqual(
        list.items.map((o) => o.metadata.name),
        ["a", "b", "c", "d", "e"]
      )
      assert.strictEqual(list.resourceVersion, "42")
      // Built-in kinds' list items come without apiVersion and kind; callers get them filled in.
      assert.strictEqual(list.items[0]?.kind, "Pod")
      assert.strictEqual(list.items[0]?.apiVersion, "v1")
      assert.deepStrictEqual(
        fake.received.map((r) => r.url.searchParams.get("continue")),
        [null, "page-2", "page-3"]
      )
      for (const request of fake.received) {
        assert.strictEqual(request.url.pathname, "/api/v1/namespaces/ns/pods")
        assert.strictEqual(request.url.searchParams.get("limit"), "2")
        assert.strictEqual(request.url.searchParams.get("labelSelector"), "app=x")
        assert.strictEqual(request.url.searchParams.get("fieldSelector"), "spec.nodeName=n1")
      }
    })
  )

  // What a store keeps of each item is made as its page arrives (ListOptions.transform): the list
  // is never held whole as the server sent it (100,000 kubelet-like Nodes are about 2 GiB parsed).
  it.live("list applies the transform to each page's items before it asks for the next page", () =>
    Effect.gen(function* () {
      const pages: Record<string, { readonly items: ReadonlyArray<string>; readonly next: string }> = {
        "": { items: ["a", "b"], next: "page-2" },
        "page-2": { items: ["c"], next: "" }
      }
      const seen: Array<string> = []
      const { api } = yield* liveApi(
        (request, response) => {
          const token = request.url.searchParams.get("continue") ?? ""
          seen.push(`request ${token === "" ? "page-1" : token}`)
          const page = pages[token]!
          json(response, 200, {
            metadata: { resourceVersion: "7", ...(page.next === "" ? {} : { continue: page.next }) },
            items: page.items.map((name) => ({ metadata: { name, annotations: { big: "x".repeat(1000) } } }))
          })
        },
        { listPageSize: 2 }
      )
      const list = yield* api.list(resources.node, {
        transform: (node) => {
          seen.push(`kept ${node.metadata.name}`)
          return { apiVersion: node.apiVersion ?? "", kind: node.kind ?? "", metadata: { name: node.metadata.name ?? "" } }
        }
      })
      assert.deepStrictEqual(seen, ["request page-1", "kept a", "kept b", "request page-2", "kept c"])
      assert.deepStrictEqual(
        list.items,
        ["a", "b", "c"].map((name) => ({ apiVersion: "v1", kind: "Node", metadata: { name } }))
      )
    })
  )

  it.live("an expired continue token (410) makes list read everything again in one request", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi(
        (request, response) => {
          if (request.url.searchParams.get("continue") !== null) {
            return json(response, 410, status(410, "Expired", "The provided continue parameter is too old"))
          }
          const paged = request.url.searchParams.get("limit") !== null
          json(response, 200, {
            metadata: paged ? { resourceVersion: "10", continue: "old" } : { resourceVersion: "11" },
            items: (paged ? ["a"] : ["a", "b"]).map((name) => ({ metadata: { name } }))
          })
        },
        { listPageSize: 1 }
      )
      const list = yield* api.list(resources.nodeImage)
      assert.deepStrictEqual(
        list.items.map((o) => o.metadata.name),
        ["a", "b"]
      )
      assert.strictEqual(list.resourceVersion, "11")
      assert.lengthOf(fake.received, 3)
      assert.isNull(last(fake).url.searchParams.get("limit"))
    })
  )
})

// ---- errors ------------------------------------------------------------------------------------

type Call = (api: KubeApi["Service"]) => Effect.Effect<unknown, KubeError>

const key = { name: "job", namespace: "ns" }
const calls: Record<string, Call> = {
  get: (api) => api.get(resources.imagePullJob, key),
  list: (api) => api.list(resources.imagePullJob, { namespace: "ns" }),
  create: (api) => api.create(resources.imagePullJob, object("job", "ns")),
  update: (api) => api.update(resources.imagePullJob, object("job", "ns")),
  patch: (api) => api.patch(resources.imagePullJob, key, { spec: { parallelism: 2 } }),
  delete: (api) => api.delete(resources.imagePullJob, key, { uid: "uid-job" }),
  watch: (api) => Stream.runDrain(api.watch(resources.imagePullJob, { namespace: "ns", resourceVersion: "1" }))
}

const errorCases: ReadonlyArray<readonly [verb: string, code: number, reason: string, expected: KubeError["_tag"]]> = [
  ["get", 404, "NotFound", "NotFound"],
  ["update", 404, "NotFound", "NotFound"],
  ["patch", 404, "NotFound", "NotFound"],
  ["delete", 404, "NotFound", "NotFound"],
  ["create", 409, "AlreadyExists", "AlreadyExists"],
  ["update", 409, "Conflict", "Conflict"],
  ["patch", 409, "Conflict", "Conflict"],
  ["delete", 409, "Conflict", "Conflict"],
  ["watch", 410, "Expired", "Gone"],
  ["create", 422, "Invalid", "Invalid"],
  ["update", 422, "Invalid", "Invalid"],
  ["patch", 422, "Invalid", "Invalid"],
  ["patch", 400, "BadRequest", "Invalid"],
  ["get", 401, "Unauthorized", "Unauthorized"],
  ["list", 403, "Forbidden", "Forbidden"],
  ["watch", 403, "Forbidden", "Forbidden"],
  ["create", 403, "Forbidden", "Forbidden"],
  ["delete", 401, "Unauthorized", "Unauthorized"],
  ["watch", 401, "Unauthorized", "Unauthorized"],
  ["list", 401, "Unauthorized", "Unauthorized"],
  ["get", 429, "TooManyRequests", "Unavailable"],
  ["list", 500, "InternalError", "Unavailable"],
  ["patch", 503, "ServiceUnavailable", "Unavailable"],
  ["watch", 504, "Timeout", "Unavailable"],
  ["get", 409, "Conflict", "Unavailable"]
]

describe("errors", () => {
  for (const [verb, code, reason, expected] of errorCases) {
    it.live(`${verb} answered ${code} ${reason} is ${expected}, without the token in it`, () =>
      Effect.gen(function* () {
        // The message echoes the request's Authorization header, as a misbehaving proxy might.
        const { api } = yield* liveApi((request, response) =>
          json(response, code, status(code, reason, `${reason} for ${request.headers.authorization ?? ""}`))
        )
        const call = calls[verb]
        if (call === undefined) throw new Error(`no call for ${verb}`)
        const error = yield* Effect.flip(call(api))
        assert.strictEqual(error._tag, expected)
        noCredentials(error)
      })
    )
  }

  it.live("422 carries the Status causes with their field paths", () =>
    Effect.gen(function* () {
      const { api } = yield* liveApi((_, response) =>
        json(
          response,
          422,
          status(422, "Invalid", 'ImagePullJob.apps.kruise.io "job" is invalid', [
            { reason: "FieldValueRequired", message: "Required value", field: "spec.image" },
            { reason: "FieldValueInvalid", message: "Invalid value: 0: must be positive", field: "spec.parallelism" }
          ])
        )
      )
      const error = yield* Effect.flip(api.create(resources.imagePullJob, object("job", "ns")))
      assert.strictEqual(error._tag, "Invalid")
      if (error._tag === "Invalid") {
        assert.deepStrictEqual(error.causes, [
          { field: "spec.image", message: "Required value" },
          { field: "spec.parallelism", message: "Invalid value: 0: must be positive" }
        ])
        assert.strictEqual(error.objectName, "job")
        assert.strictEqual(error.namespace, "ns")
      }
    })
  )

  it.live("a refused connection is Unavailable for every verb", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, {}))
      const kubeconfig = writeKubeconfig(kubeconfigYaml(`http://127.0.0.1:${yield* closedPort}`))
      const api = yield* make(options(fake, { kubeconfig }))
      for (const [verb, call] of Object.entries(calls)) {
        const error = yield* Effect.flip(call(api))
        assert.strictEqual(error._tag, "Unavailable", verb)
        if (error._tag === "Unavailable") assert.include(error.message, "ECONNREFUSED")
        noCredentials(error)
      }
    })
  )

  it.live("an answer that is not JSON, or not an object, is Unavailable", () =>
    Effect.gen(function* () {
      const { api } = yield* liveApi((request, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end(request.method === "GET" ? "<html>proxy login</html>" : "[]")
      })
      assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, key)))._tag, "Unavailable")
      assert.strictEqual((yield* Effect.flip(api.list(resources.imagePullJob))).message, "list ImagePullJob: the answer is not a list")
      assert.strictEqual((yield* Effect.flip(calls["patch"]!(api)))._tag, "Unavailable")
    })
  )

  it.live("a request with no answer in time is Unavailable and its connection is closed", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi(() => undefined, { requestTimeout: "200 millis" })
      const error = yield* Effect.flip(api.get(resources.imagePullJob, key))
      assert.strictEqual(error._tag, "Unavailable")
      yield* until(() => fake.closed.has(0), "the abandoned request to be closed")
    })
  )
})

// ---- watch -------------------------------------------------------------------------------------

const line = (event: unknown): string => `${JSON.stringify(event)}\n`

const added = (name: string, resourceVersion: string) => ({
  type: "ADDED",
  object: { ...object(name, "ns"), metadata: { name, namespace: "ns", resourceVersion } }
})

/** A 200 watch stream that writes `chunks` a little apart, then `finish`es it. */
const streaming =
  (chunks: ReadonlyArray<string>, finish: (response: http.ServerResponse, raw: http.IncomingMessage) => void): Handler =>
  (_, response, raw) => {
    response.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" })
    response.flushHeaders()
    let i = 0
    const next = () => {
      const chunk = chunks[i++]
      if (chunk === undefined) return finish(response, raw)
      response.write(chunk)
      setTimeout(next, 5)
    }
    next()
  }

const summary = (events: ReadonlyArray<WatchEvent>): Array<string> =>
  events.map((e) =>
    e.type === "BOOKMARK"
      ? `BOOKMARK ${e.resourceVersion}`
      : `${e.type} ${e.object.metadata.name ?? ""} ${e.object.metadata.resourceVersion ?? ""}`
  )

/** The events a watch emitted before it ended, and how it ended. */
const watchAll = (api: KubeApi["Service"]) =>
  Effect.gen(function* () {
    const events: Array<WatchEvent> = []
    const exit = yield* api
      .watch(resources.imagePullJob, { namespace: "ns", resourceVersion: "3", labelSelector: "a=b", fieldSelector: "metadata.name=x" })
      .pipe(
        Stream.runForEach((event) => Effect.sync(() => events.push(event))),
        Effect.timeout("10 seconds"),
        Effect.exit
      )
    return { events, exit }
  })

const failureTag = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  return error?._tag === "Fail" ? (error.error as { readonly _tag?: string })._tag : "defect or interruption"
}

describe("watch", () => {
  const chunks = (() => {
    const text =
      line(added("a", "4")) +
      line({ type: "MODIFIED", object: { ...added("a", "5").object } }) +
      line({
        type: "BOOKMARK",
        object: { kind: "ImagePullJob", apiVersion: "apps.kruise.io/v1alpha1", metadata: { resourceVersion: "6" } }
      }) +
      line({ type: "DELETED", object: { ...added("a", "7").object } })
    // Cut the newline-delimited JSON at awkward places: inside keys, strings, and right after "\n".
    const cuts = [3, 17, 60, text.indexOf("\n") + 1, text.indexOf("BOOKMARK") + 4, text.length - 2]
    return cuts.map((cut, i) => text.slice(i === 0 ? 0 : cuts[i - 1], cut)).concat(text.slice(cuts[cuts.length - 1]))
  })()
  const parsed = ["ADDED a 4", "MODIFIED a 5", "BOOKMARK 6", "DELETED a 7"]

  it.live("parses events split across chunks and ends when the server ends the stream", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi(streaming(chunks, (response) => response.end()))
      const { events, exit } = yield* watchAll(api)
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(summary(events), parsed)
      const query = last(fake).url.searchParams
      assert.strictEqual(last(fake).url.pathname, `${kruise}/namespaces/ns/imagepulljobs`)
      assert.strictEqual(query.get("watch"), "true")
      assert.strictEqual(query.get("resourceVersion"), "3")
      assert.strictEqual(query.get("allowWatchBookmarks"), "true")
      assert.strictEqual(query.get("labelSelector"), "a=b")
      assert.strictEqual(query.get("fieldSelector"), "metadata.name=x")
      const timeoutSeconds = Number(query.get("timeoutSeconds"))
      assert.isAtLeast(timeoutSeconds, 300)
      assert.isBelow(timeoutSeconds, 600)
      assert.strictEqual(last(fake).headers.authorization, `Bearer ${token}`)
      assert.strictEqual(last(fake).headers["user-agent"], "preheat-test/1")
    })
  )

  it.live("an ERROR event with 410 fails the stream with Gone after the events before it", () =>
    Effect.gen(function* () {
      const gone = line({ type: "ERROR", object: status(410, "Expired", "too old resource version: 3 (40)") })
      const { api } = yield* liveApi(streaming([...chunks, gone], (response) => response.end()))
      const { events, exit } = yield* watchAll(api)
      assert.deepStrictEqual(summary(events), parsed)
      assert.strictEqual(failureTag(exit), "Gone")
    })
  )

  it.live("an ERROR event with another code fails with that code's error", () =>
    Effect.gen(function* () {
      const error = line({ type: "ERROR", object: status(500, "InternalError", "etcd is sad") })
      const { api } = yield* liveApi(streaming([error], (response) => response.end()))
      assert.strictEqual(failureTag((yield* watchAll(api)).exit), "Unavailable")
    })
  )

  it.live("a connection reset mid-stream is Unavailable after the events before it", () =>
    Effect.gen(function* () {
      const { api } = yield* liveApi(streaming(chunks.slice(0, -1), (_, raw) => raw.socket.destroy()))
      const { events, exit } = yield* watchAll(api)
      assert.deepStrictEqual(summary(events), parsed.slice(0, 3))
      assert.strictEqual(failureTag(exit), "Unavailable")
    })
  )

  it.live("a server that answers the watch request with HTTP 410 or 403 fails it with Gone or Forbidden", () =>
    Effect.gen(function* () {
      const { api } = yield* liveApi((request, response) =>
        request.url.searchParams.get("resourceVersion") === "3"
          ? json(response, 410, status(410, "Gone", "gone"))
          : json(response, 403, status(403, "Forbidden", "no"))
      )
      assert.strictEqual(failureTag((yield* watchAll(api)).exit), "Gone")
      const denied = yield* api.watch(resources.nodeImage, { resourceVersion: "9" }).pipe(Stream.runDrain, Effect.flip)
      assert.strictEqual(denied._tag, "Forbidden")
    })
  )

  it.live("a consumer that stops early aborts the HTTP request", () =>
    Effect.gen(function* () {
      // Events keep coming forever unless the client goes away.
      const { fake, api } = yield* liveApi((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.flushHeaders()
        let rv = 10
        const timer = setInterval(() => response.write(line(added("a", String(rv++)))), 5)
        response.on("close", () => clearInterval(timer))
      })
      const first = yield* api
        .watch(resources.imagePullJob, { namespace: "ns", resourceVersion: "3" })
        .pipe(Stream.take(2), Stream.runCollect)
      assert.lengthOf(first, 2)
      yield* until(() => fake.closed.has(0), "the watch request to be closed")

      const interrupted = yield* api
        .watch(resources.imagePullJob, { namespace: "ns", resourceVersion: "3" })
        .pipe(Stream.runDrain, Effect.forkChild)
      yield* until(() => fake.received.length === 2, "the second watch to start")
      yield* Fiber.interrupt(interrupted)
      yield* until(() => fake.closed.has(1), "the interrupted watch request to be closed")
    })
  )

  /** watchStream on a fake server with an idle limit of 300 ms. */
  const idleWatch = (handler: Handler) =>
    Effect.gen(function* () {
      const fake = yield* fakeServer(handler)
      const config = yield* loadKubeConfig({ kubeconfig: fake.kubeconfig })
      const limiter = makeRateLimiter({ qps: 100, burst: 100 })
      const transport = yield* makeTransport(config, { userAgent: "preheat-test/1", limiter, requestTimeout: Duration.seconds(5) })
      return watchStream(
        transport,
        limiter,
        { path: "/api/v1/pods", query: {}, idleTimeoutMillis: 300 },
        { verb: "watch", resource: resources.pod, name: "" }
      )
    })

  it.live("a watch silent for longer than its idle limit is Unavailable", () =>
    Effect.gen(function* () {
      const watch = yield* idleWatch((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.flushHeaders()
      })
      const started = Date.now()
      const error = yield* watch.pipe(Stream.runDrain, Effect.flip)
      assert.strictEqual(error._tag, "Unavailable")
      assert.include(error.message, "aborted due to timeout")
      assert.isBelow(Date.now() - started, 5_000)
    })
  )

  it.live("the idle limit counts from the last thing that arrived, not from the start", () =>
    Effect.gen(function* () {
      const watch = yield* idleWatch((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        let rv = 10
        const timer = setInterval(() => {
          response.write(line(added("a", String(rv++))))
          if (rv === 18) {
            clearInterval(timer)
            response.end()
          }
        }, 100)
        response.on("close", () => clearInterval(timer))
      })
      // 8 events 100 ms apart: 800 ms in all, more than twice the limit.
      const events = yield* watch.pipe(Stream.runCollect)
      assert.lengthOf(events, 8)
    })
  )
})

// ---- rate limiting -----------------------------------------------------------------------------

describe("rate limiting", () => {
  it.effect("a token bucket lets a burst through, then qps per second, in arrival order", () =>
    Effect.gen(function* () {
      const limiter = makeRateLimiter({ qps: 2, burst: 3 })
      const passed: Array<number> = []
      for (let i = 0; i < 7; i++)
        yield* Effect.forkChild(
          Effect.andThen(
            limiter.take,
            Effect.sync(() => passed.push(i))
          )
        )
      yield* Effect.yieldNow
      assert.deepStrictEqual(passed, [0, 1, 2])
      yield* TestClock.adjust("500 millis")
      assert.deepStrictEqual(passed, [0, 1, 2, 3])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(passed, [0, 1, 2, 3, 4, 5])
      yield* TestClock.adjust("10 seconds")
      assert.lengthOf(passed, 7)
      // Idle time refills the bucket, up to burst.
      for (let i = 0; i < 4; i++)
        yield* Effect.forkChild(
          Effect.andThen(
            limiter.take,
            Effect.sync(() => passed.push(10 + i))
          )
        )
      yield* Effect.yieldNow
      assert.deepStrictEqual(passed.slice(7), [10, 11, 12])
    })
  )

  it.effect("an interrupted wait gives its token back", () =>
    Effect.gen(function* () {
      const limiter = makeRateLimiter({ qps: 1, burst: 1 })
      yield* limiter.take
      const waiting = yield* Effect.forkChild(limiter.take)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(waiting)
      yield* TestClock.adjust("1 second")
      const next = yield* Effect.forkChild(limiter.take)
      yield* Effect.yieldNow
      assert.isDefined(next.pollUnsafe())
    })
  )

  it.effect("requests through the layer wait for tokens on Effect's clock; a started watch is not limited", () =>
    Effect.gen(function* () {
      const { fake, api } = yield* liveApi(
        (request, response) => {
          if (request.url.searchParams.get("watch") !== "true") return json(response, 200, object("job", "ns"))
          response.writeHead(200, { "content-type": "application/json" })
          response.flushHeaders()
          for (let rv = 10; rv < 60; rv++) response.write(line(added("w", String(rv))))
        },
        { qps: 1, burst: 2 }
      )
      const gets = yield* Effect.forkChild(
        Effect.forEach([1, 2, 3, 4], () => api.get(resources.imagePullJob, key), { concurrency: "unbounded" })
      )
      yield* until(() => fake.received.length === 2, "the burst of 2")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.lengthOf(fake.received, 2, "no third request before the clock moves")
      yield* TestClock.adjust("1 second")
      yield* until(() => fake.received.length === 3, "a third request after 1 s")
      yield* TestClock.adjust("1 second")
      yield* until(() => fake.received.length === 4, "a fourth request after 2 s")
      yield* Fiber.join(gets)

      // The watch waits for one token to start; its 50 events then flow with the bucket empty.
      const watching = yield* api
        .watch(resources.imagePullJob, { namespace: "ns", resourceVersion: "3" })
        .pipe(Stream.take(50), Stream.runCount, Effect.forkChild)
      yield* TestClock.adjust("1 second")
      yield* until(() => fake.received.length === 5, "the watch request")
      assert.strictEqual(yield* Fiber.join(watching), 50)
    })
  )
})

// ---- metrics -----------------------------------------------------------------------------------

describe("metrics", () => {
  it.live("the layer counts its requests in preheat_api_requests_total", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((request, response) =>
        request.method === "GET" ? json(response, 200, object("job", "ns")) : json(response, 404, status(404, "NotFound", "nope"))
      )
      const layer = KubeLive.layer(options(fake)).pipe(Layer.provideMerge(Metrics.layerTest))
      yield* Effect.gen(function* () {
        const api = yield* KubeApi
        yield* api.get(resources.imagePullJob, key)
        yield* Effect.flip(api.patch(resources.imagePullJob, key, {}))
        const metrics = yield* Metrics
        assert.strictEqual(yield* metrics.read("preheat_api_requests_total", { verb: "get", result: "ok" }), 1)
        assert.strictEqual(yield* metrics.read("preheat_api_requests_total", { verb: "patch", result: "not_found" }), 1)
      }).pipe(Effect.provide(layer))
    })
  )

  it.live("makeFromConfig takes an already loaded KubeConfig", () =>
    Effect.gen(function* () {
      const fake = yield* fakeServer((_, response) => json(response, 200, { metadata: { resourceVersion: "1" }, items: [] }))
      const config = new KubeConfig()
      config.loadFromFile(fake.kubeconfig)
      const api = yield* makeFromConfig(config, options(fake))
      assert.deepStrictEqual(yield* api.list(resources.nodeImage), { items: [], resourceVersion: "1" })
    })
  )
})
