// The daemon's readiness names what keeps its client from the API server (a 401, a 403, TLS), when
// its KubeApi reports to an ApiAccess as the live one does (KubeLive.layerWithAccess).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ApiAccess } from "../../src/kube/ApiAccess.ts"
import { launch, testLayer } from "./support/daemonHarness.ts"

describe("daemon: readiness with an ApiAccess", () => {
  it.effect("fails with the access problem while it lasts, beside the NodeImage watch", () =>
    Effect.gen(function* () {
      const access = yield* ApiAccess
      const daemon = yield* launch()
      expect(yield* daemon.ready).toEqual([
        { name: "api-access", ok: true },
        { name: "nodeimage-watch", ok: true }
      ])
      const message = '401 Unauthorized from https://127.0.0.1:6443: the credentials of user "node" in /kc were not accepted'
      yield* access.report({ problem: { key: "credentials", cause: "401", message, request: "patch NodeImage/status" }, fine: [] })
      expect((yield* daemon.ready)[0]).toEqual({ name: "api-access", ok: false, message })
      yield* access.report({ fine: ["credentials"] })
      expect((yield* daemon.ready)[0]).toEqual({ name: "api-access", ok: true })
    }).pipe(Effect.scoped, Effect.provide(testLayer()), Effect.provide(ApiAccess.layer))
  )
})
