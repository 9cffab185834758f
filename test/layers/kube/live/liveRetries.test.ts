// The live client's own retries (layers/kube/live/retryPolicy.ts) against a small HTTP server that
// fails on a script: 429 waits exactly the Retry-After the server asked for, reads are retried after
// 5xx and resets with backoff, writes are not retried after 5xx, and out of retries the last answer
// stands as a typed error.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { make } from "../../../../layers/kube/live/kubeLive.ts"
import { decideOnAnswer, decideOnNoAnswer, retryAfterOf } from "../../../../layers/kube/live/retryPolicy.ts"
import { resources } from "../../../../src/kube/resources.ts"
import { localServer } from "../../../support/localServer.ts"

type Step = "ok" | "reset" | { readonly code: number; readonly retryAfter?: string }

interface Script {
  readonly url: string
  /** When each request arrived (ms since epoch). */
  readonly arrivals: Array<number>
}

const job = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "job", namespace: "ns", resourceVersion: "1" }
}
const isList = (url: string | undefined) => new URL(url ?? "/", "http://x").pathname.endsWith("imagepulljobs")

/** A server answering request i with steps[i] (the last step repeats). */
const scripted = (steps: ReadonlyArray<Step>): Effect.Effect<Script, never, Scope.Scope> => {
  const arrivals: Array<number> = []
  return Effect.map(
    localServer((request, response) => {
      request.resume()
      request.on("end", () => {
        const step = steps[Math.min(arrivals.length, steps.length - 1)]!
        arrivals.push(Date.now())
        if (step === "reset") return void response.socket?.destroy()
        const body =
          step === "ok"
            ? JSON.stringify(isList(request.url) ? { metadata: { resourceVersion: "1" }, items: [job] } : job)
            : JSON.stringify({
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                reason: "TooManyRequests",
                message: "slow down",
                code: step.code
              })
        response.writeHead(step === "ok" ? 200 : step.code, {
          "content-type": "application/json",
          ...(step !== "ok" && step.retryAfter !== undefined ? { "retry-after": step.retryAfter } : {})
        })
        response.end(body)
      })
    }),
    ({ url }) => ({ url, arrivals })
  )
}

const apiOn = (script: Script, maxRetries?: number) => {
  const dir = mkdtempSync(join(tmpdir(), "preheat-retries-"))
  const kubeconfig = join(dir, "config")
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${script.url}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
  )
  return make({ kubeconfig, qps: 1000, burst: 1000, userAgent: "preheat-test/1", ...(maxRetries === undefined ? {} : { maxRetries }) })
}

const key = { name: "job", namespace: "ns" }
const gaps = (arrivals: ReadonlyArray<number>) => arrivals.slice(1).map((at, i) => at - arrivals[i]!)

describe("retry policy", () => {
  it("429 waits for Retry-After (header, else the Status details, else 1 s), whatever the verb", () => {
    assert.deepStrictEqual(decideOnAnswer("POST", 429, Duration.seconds(3)), { _tag: "After", delay: Duration.seconds(3) })
    assert.deepStrictEqual(decideOnAnswer("PATCH", 429, undefined), { _tag: "After", delay: Duration.seconds(1) })
    assert.deepStrictEqual(retryAfterOf("2", undefined), Duration.seconds(2))
    assert.deepStrictEqual(retryAfterOf(undefined, { kind: "Status", details: { retryAfterSeconds: 4 } }), Duration.seconds(4))
    assert.strictEqual(retryAfterOf("Wed, 21 Oct 2015 07:28:00 GMT", {}), undefined)
  })

  it("5xx: retried with Retry-After for any verb, with backoff for reads only; no answer: reads only", () => {
    assert.deepStrictEqual(decideOnAnswer("PUT", 503, Duration.seconds(1)), { _tag: "After", delay: Duration.seconds(1) })
    assert.deepStrictEqual(decideOnAnswer("GET", 500, undefined), { _tag: "Backoff" })
    assert.deepStrictEqual(decideOnAnswer("POST", 500, undefined), { _tag: "Done" })
    assert.deepStrictEqual(decideOnAnswer("GET", 404, undefined), { _tag: "Done" })
    assert.deepStrictEqual(decideOnNoAnswer("GET"), { _tag: "Backoff" })
    assert.deepStrictEqual(decideOnNoAnswer("PATCH"), { _tag: "Done" })
  })
})

describe("the live client's retries", () => {
  it.live("a 429 with Retry-After is retried no sooner than asked, then succeeds", () =>
    Effect.gen(function* () {
      const script = yield* scripted([{ code: 429, retryAfter: "1" }, { code: 429, retryAfter: "1" }, "ok"])
      const api = yield* apiOn(script)
      const patched = yield* api.patch(resources.imagePullJob, key, { metadata: { labels: { a: "b" } } })
      assert.strictEqual(patched.metadata.name, "job")
      assert.strictEqual(script.arrivals.length, 3)
      for (const gap of gaps(script.arrivals)) assert.isAtLeast(gap, 1000 - 20)
      for (const gap of gaps(script.arrivals)) assert.isBelow(gap, 1500)
    })
  )

  it.live("a read is retried after 500s and a reset connection, with growing delays", () =>
    Effect.gen(function* () {
      const script = yield* scripted([{ code: 500 }, "reset", { code: 503 }, "ok"])
      const api = yield* apiOn(script)
      const listed = yield* api.list(resources.imagePullJob, { namespace: "ns" })
      assert.strictEqual(listed.items.length, 1)
      assert.strictEqual(script.arrivals.length, 4)
      const [first, , third] = gaps(script.arrivals)
      assert.isAtLeast(first!, 150)
      assert.isAtLeast(third!, 2 * 150)
    })
  )

  it.live("a write answered 500 goes back to the caller at once as Unavailable (its queue retries it)", () =>
    Effect.gen(function* () {
      const script = yield* scripted([{ code: 500 }, "ok"])
      const api = yield* apiOn(script)
      const error = yield* Effect.flip(api.patch(resources.imagePullJob, key, { metadata: { labels: { a: "b" } } }))
      assert.strictEqual(error._tag, "Unavailable")
      assert.include(error.message, "HTTP 500")
      assert.strictEqual(script.arrivals.length, 1)
    })
  )

  it.live("out of retries, the last answer stands: a 429 is Unavailable naming it", () =>
    Effect.gen(function* () {
      const script = yield* scripted([{ code: 429, retryAfter: "0" }])
      const api = yield* apiOn(script, 3)
      const error = yield* Effect.flip(api.get(resources.imagePullJob, key))
      assert.strictEqual(error._tag, "Unavailable")
      assert.include(error.message, "HTTP 429")
      assert.strictEqual(script.arrivals.length, 4)
    })
  )
})
