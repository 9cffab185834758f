// The daemon with credential providers (--image-credential-provider-config), on the simulated
// runtime and simulated time, with a fake plugin runner: the order credentials are tried in, what
// a failed pull says, and that a failing provider fails its own tags only.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { CredentialProvider } from "../../src/cri/credentialProvider/config.ts"
import { CredentialProviders, makeCredentialProviders } from "../../src/cri/credentialProvider/CredentialProviders.ts"
import type { RegistryAuth } from "../../src/cri/CriRuntime.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { answer, fakePluginRunner, type PluginBehaviour, responseJson } from "../support/fakePluginRunner.ts"
import { advance, createNodeImage, events, launch, secret, secretNamespace, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const image = "registry.example.com/team/app"
const publicImage = "public.example.com/tools/curl"

const provider = (name: string): CredentialProvider => ({
  name,
  matchImages: ["registry.example.com", "public.example.com"],
  defaultCacheMillis: 0,
  apiVersion: "credentialprovider.kubelet.k8s.io/v1",
  args: [],
  env: [],
  tokenAttributes: undefined
})

const robot = (user: string) => answer(responseJson({ auth: { "registry.example.com": { username: user, password: `pw-${user}` } } }))

/** The daemon's services with providers over a fake runner. */
const withProviders = (providers: ReadonlyArray<CredentialProvider>, behaviours: Record<string, PluginBehaviour>) => {
  const fake = fakePluginRunner(new Map(Object.entries(behaviours)))
  const layer = Layer.effect(CredentialProviders, makeCredentialProviders({ providers }, { runTimeout: "1 minute" })).pipe(
    Layer.provide(fake.layer),
    Layer.provideMerge(testLayer())
  )
  return { fake, layer }
}

/** The registry lets only `good` pull `image`, recording what it was offered, in order. */
const guardRegistry = (good: string) =>
  Effect.gen(function* () {
    const fake = yield* SimulatedRuntime
    const offered: Array<string> = []
    yield* fake.requireAuth(image, (auth: RegistryAuth | undefined) => {
      offered.push(auth?.username ?? "(anonymous)")
      return auth?.username === good
    })
    return offered
  })

describe("daemon: credential providers", () => {
  const one = withProviders([provider("robot")], { robot: robot("robot") })
  it.effect("a tag pulls with the provider's credentials and no pull secret, asked before the first pull", () =>
    Effect.gen(function* () {
      const offered = yield* guardRegistry("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect(offered).toEqual(["robot"])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
      expect(one.fake.runs.map((r) => r.image)).toEqual([image])
    }).pipe(Effect.scoped, Effect.provide(one.layer))
  )

  const both = withProviders([provider("robot")], { robot: robot("robot") })
  it.effect("the job's pull secrets come first, then the providers' credentials", () =>
    Effect.gen(function* () {
      const offered = yield* guardRegistry("robot")
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("old", { "registry.example.com": { username: "old", password: "p" } }))
      yield* createNodeImage({ [image]: { pullSecrets: [{ namespace: secretNamespace, name: "old" }], tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect(offered).toEqual(["old", "robot"])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(both.layer))
  )

  const refused = withProviders([provider("robot")], { robot: robot("stale") })
  it.effect("when every credential is refused, the message names the secrets and providers tried, never a credential", () =>
    Effect.gen(function* () {
      yield* guardRegistry("nobody")
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("old", { "registry.example.com": { username: "old", password: "p" } }))
      yield* createNodeImage({
        [image]: { pullSecrets: [{ namespace: secretNamespace, name: "old" }], tags: [tag("v1", { pullPolicy: { backoffLimit: 0 } })] }
      })
      yield* launch()
      yield* advance(1000)
      const status = yield* tagStatus(image, "v1")
      expect(status).toMatchObject({
        phase: "Failed",
        message:
          `failed to pull image "${image}:v1": registry refused the credentials: simulated registry: 401 Unauthorized ` +
          "(tried pull secret preheat-daemon-config/old, credential provider robot)"
      })
      expect(status?.message).not.toContain("pw-stale")
    }).pipe(Effect.scoped, Effect.provide(refused.layer))
  )

  const failing = withProviders([provider("broken")], {
    broken: {
      _tag: "Fail",
      reason: "failed",
      message: "its plugin exited with code 1 (its output is not shown as it may hold credentials)"
    }
  })
  it.effect("a failing provider fails the tags it would serve, named with the image, with a Warning event; other images go on", () =>
    Effect.gen(function* () {
      yield* guardRegistry("robot")
      yield* createNodeImage({
        [image]: { tags: [tag("v1", { pullPolicy: { backoffLimit: 1 } })] },
        [publicImage]: { tags: [tag("8.5")] }
      })
      yield* launch()
      yield* advance(3000)
      expect((yield* tagStatus(publicImage, "8.5"))?.phase).toBe("Succeeded")
      const expected =
        `failed to pull image "${image}:v1" after 2 attempts: registry refused the credentials: simulated registry: 401 Unauthorized ` +
        "(tried anonymously: no pull secret or credential provider had credentials for it) " +
        `(credential provider "broken" failed for image "${image}": its plugin exited with code 1 (its output is not shown as it may hold credentials))`
      expect(yield* tagStatus(image, "v1")).toMatchObject({ phase: "Failed", message: expected })
      const warnings = (yield* events).filter((e) => e.reason === "CredentialProviderFailed")
      expect(warnings.map((e) => [e.type, e.message])).toEqual([["Warning", `${expected} (node node-1)`]])
      // Asked before each attempt (a failure is not kept), and for the public image too, which it matched.
      expect(failing.fake.runs.map((r) => r.image)).toEqual([image, publicImage, image])
      const metrics = yield* Metrics
      expect(yield* metrics.read("preheat_credential_provider_runs_total", { provider: "broken", result: "failed" })).toBe(3)
    }).pipe(Effect.scoped, Effect.provide(failing.layer))
  )

  const hanging = withProviders([provider("slow")], { slow: { _tag: "Hang" } })
  it.effect("a hanging provider is stopped after a minute and the tag fails saying so", () =>
    Effect.gen(function* () {
      yield* guardRegistry("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", { pullPolicy: { backoffLimit: 0 } })] } })
      yield* launch()
      yield* advance(59_000, 1000)
      expect((yield* tagStatus(image, "v1"))?.phase).not.toBe("Failed")
      yield* advance(2000)
      expect((yield* tagStatus(image, "v1"))?.message).toContain(
        `(credential provider "slow" failed for image "${image}": its plugin gave no answer within 1m and was stopped)`
      )
    }).pipe(Effect.scoped, Effect.provide(hanging.layer))
  )
})
