// The live KubeApi must pass the same conformance suite as the in-memory one, over HTTP against the
// embedded API server (no real kube-apiserver can be installed here: ../shared/notes/kube-api.md),
// started in-process on 127.0.0.1 with a bearer token, reached through a kubeconfig as a user would.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../../../harness/layers/inMemoryKubeApi.ts"
import { controllerRateLimit, KubeLive } from "../../../../layers/kube/live/kubeLive.ts"
import { serveApi } from "../../../../harness/apiserver/http/server.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { kubeApiConformance } from "../../../kube/conformance.ts"

const token = "conformance-token"

const kubeconfigFor = (url: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), "preheat-conformance-")), "config")
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: embedded
  cluster:
    server: ${url}
    insecure-skip-tls-verify: true
users:
- name: conformance
  user:
    token: ${token}
contexts:
- name: embedded
  context: {cluster: embedded, user: conformance}
current-context: embedded
`
  )
  return path
}

/** An embedded API server for the suite's lifetime, and the live KubeApi pointed at it. */
const liveOverHttp = Layer.unwrap(
  Effect.gen(function* () {
    const address = yield* serveApi({ token }).pipe(Effect.provide(InMemoryKubeApi.layer))
    return KubeLive.layer({ kubeconfig: kubeconfigFor(address.url), ...controllerRateLimit, userAgent: "preheat-conformance" })
  })
).pipe(Layer.provide(Metrics.layerTest), Layer.orDie)

kubeApiConformance("live over HTTP", liveOverHttp)
