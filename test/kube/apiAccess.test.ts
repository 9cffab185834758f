// ApiAccess on the TestClock: a cause said at WARN once when it starts, again only after a minute
// while it lasts, at once when it changes, at INFO when it ends; and /readyz's api-access line.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import type { AccessOutcome, AccessProblem } from "../../src/kube/accessProblems.ts"
import { ApiAccess, makeApiAccess } from "../../src/kube/ApiAccess.ts"
import { renderHealth } from "../../src/ops/server.ts"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

const capture = (lines: Array<Line>) =>
  Logger.layer([
    Logger.make((options) => {
      lines.push({
        level: options.logLevel,
        message: (Array.isArray(options.message) ? options.message : [options.message]).join(" "),
        annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
      })
    })
  ])

const unauthorized: AccessProblem = {
  key: "credentials",
  cause: "401",
  message: '401 Unauthorized from https://127.0.0.1:6443: the credentials of user "u" in /kc were not accepted',
  request: "list NodeImage"
}
const refused: AccessProblem = {
  key: "connection",
  cause: "unreachable",
  message: "cannot reach https://127.0.0.1:6443",
  request: "get Lease"
}
const tls: AccessProblem = { key: "connection", cause: "tls UnknownCa", message: "TLS: unknown CA", request: "get Lease" }

const met = (problem: AccessProblem, fine: ReadonlyArray<string> = []): AccessOutcome => ({ problem, fine })
const answered: AccessOutcome = { fine: ["connection", "credentials", "list nodeimages.apps.kruise.io cluster-wide"] }

const run = <A>(lines: Array<Line>, body: (access: ApiAccess["Service"]) => Effect.Effect<A>) =>
  Effect.suspend(() => body(makeApiAccess())).pipe(Effect.provide(capture(lines)))

describe("ApiAccess", () => {
  it.effect("says a cause once, again after a minute, at once when it changes, and when it ends", () => {
    const lines: Array<Line> = []
    return run(lines, (access) =>
      Effect.gen(function* () {
        yield* access.report(met(unauthorized))
        yield* TestClock.adjust("30 seconds")
        yield* access.report(met(unauthorized))
        yield* TestClock.adjust("29 seconds")
        yield* access.report(met(unauthorized))
        assert.deepStrictEqual(
          lines.map((line) => [line.level, line.message]),
          [["Warn", `API access failing: ${unauthorized.message}`]]
        )
        assert.deepStrictEqual(lines[0]?.annotations, { request: "list NodeImage" })

        yield* TestClock.adjust("1 second")
        yield* access.report(met(unauthorized))
        assert.deepStrictEqual(lines[1], {
          level: "Warn",
          message: `API access still failing: ${unauthorized.message}`,
          annotations: { request: "list NodeImage", failingFor: "1m" }
        })

        // Another cause under another key starts at once; a changed cause under the same key too.
        yield* access.report(met(refused, []))
        yield* TestClock.adjust("1 second")
        yield* access.report(met(tls))
        assert.deepStrictEqual(
          lines.slice(2).map((line) => line.message),
          [`API access failing: ${refused.message}`, `API access failing: ${tls.message}`]
        )

        yield* TestClock.adjust("2 seconds")
        yield* access.report(answered)
        assert.deepStrictEqual(
          lines.slice(4).map((line) => [line.level, line.message, line.annotations["about"], line.annotations["failedFor"]]),
          [
            ["Info", "API access recovered", "connection", "2s"],
            ["Info", "API access recovered", "credentials", "1m 3s"]
          ]
        )
        assert.isTrue(access.quiet())
        yield* access.report(answered)
        assert.strictEqual(lines.length, 6)
      })
    )
  })

  it.effect("the api-access check names every current cause, as /readyz?verbose shows it", () => {
    const lines: Array<Line> = []
    return run(lines, (access) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* access.check, { name: "api-access", ok: true })
        yield* access.report(met(unauthorized))
        const check = yield* access.check
        assert.deepStrictEqual(check, { name: "api-access", ok: false, message: unauthorized.message })
        const reply = renderHealth("readyz", [check, { name: "informers-synced", ok: false, message: "stores not yet listed" }], true)
        assert.strictEqual(reply.status, 503)
        assert.strictEqual(
          reply.body,
          `[-]api-access failed: ${unauthorized.message}\n[-]informers-synced failed: stores not yet listed\nreadyz check failed\n`
        )
      })
    )
  })

  it.effect("a problem no request meets for five minutes is over: a one-off 403 does not keep the process unready", () => {
    const lines: Array<Line> = []
    const forbidden: AccessProblem = {
      key: 'delete imagepulljobs.apps.kruise.io in namespace "a"',
      cause: "403",
      message: "forbidden: ...",
      request: "delete ImagePullJob"
    }
    return run(lines, (access) =>
      Effect.gen(function* () {
        yield* access.report(met(forbidden, ["connection", "credentials"]))
        yield* TestClock.adjust("4 minutes")
        assert.isFalse((yield* access.check).ok)
        yield* TestClock.adjust("1 minute")
        assert.isTrue((yield* access.check).ok)
        assert.deepStrictEqual(
          lines.map((line) => [line.level, line.message]),
          [
            ["Warn", "API access failing: forbidden: ..."],
            ["Info", "API access problem no longer seen"]
          ]
        )
      })
    )
  })

  it.effect("the layer gives one ApiAccess", () =>
    Effect.gen(function* () {
      const access = yield* ApiAccess
      assert.isTrue(access.quiet())
    }).pipe(Effect.provide(ApiAccess.layer))
  )
})
