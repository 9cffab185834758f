// A tag that failed because the registry refused a credential provider's credentials: the daemon
// asks the provider again as its answer expires and marks the failed tag once it answers
// otherwise (status credentialProviders[].renewedAt), for the controller to pull again. The pure
// decisions first, then the daemon on the simulated runtime and simulated time with a fake plugin
// runner: when it asks, what it writes (nothing while nothing changes), and what ends a watch.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { printOf } from "../../src/cri/credentialProvider/answerPrint.ts"
import type { CredentialProvider } from "../../src/cri/credentialProvider/config.ts"
import { CredentialProviders, makeCredentialProviders, type ProviderAnswer } from "../../src/cri/credentialProvider/CredentialProviders.ts"
import { DeadlineExceeded, Unauthorized } from "../../src/cri/errors.ts"
import { registryCredential } from "../../src/cri/dockerConfig.ts"
import {
  nextAskAt,
  providersOfStoredFailure,
  refusedAnswers,
  renewedProviders,
  withProvidersAsked,
  withRenewal
} from "../../src/daemon/providerRenewal/decide.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { answer, fakePluginRunner, type PluginBehaviour, responseJson } from "../support/fakePluginRunner.ts"
import { advance, createNodeImage, launch, node, PatchLog, setImages, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const image = "registry.example.com/team/app"

const print = (user: string) => printOf([registryCredential({ username: user, password: `pw-${user}` })])
const said = (provider: string, user: string | undefined, expiresAt?: number): ProviderAnswer => ({
  provider,
  print: user === undefined ? undefined : print(user),
  expiresAt
})

describe("provider renewal: decisions", () => {
  it("watches the providers asked when the registry refused the credentials or a provider failed, and for nothing else", () => {
    const answers = [said("ecr", "old")]
    const refused = new Unauthorized({ image, message: "401 Unauthorized" })
    expect(refusedAnswers(refused, false, answers)).toBe(answers)
    expect(refusedAnswers(new DeadlineExceeded({ image }), true, answers)).toBe(answers)
    expect(refusedAnswers(new DeadlineExceeded({ image }), false, answers)).toEqual([])
    expect(refusedAnswers(undefined, false, answers)).toEqual([])
  })

  it("names them on the failed status, and marks those that answer anew once", () => {
    const failed: ImageTagStatus = { tag: "v1", phase: "Failed", version: 2, message: "refused" }
    expect(withProvidersAsked(failed, [])).toBe(failed)
    const asked = withProvidersAsked(failed, [said("ecr", "old"), said("gcr", undefined)])
    expect(asked.credentialProviders).toEqual([{ name: "ecr" }, { name: "gcr" }])
    const marked = withRenewal(asked, ["gcr"], Date.parse("2026-01-01T00:00:00Z"))
    expect(marked).toEqual({ ...asked, credentialProviders: [{ name: "ecr" }, { name: "gcr", renewedAt: "2026-01-01T00:00:00Z" }] })
    // An earlier mark stays as it was.
    expect(withRenewal(marked, ["gcr", "ecr"], 0).credentialProviders?.[1]).toEqual({ name: "gcr", renewedAt: "2026-01-01T00:00:00Z" })
  })

  it("asks again once the first kept answer expires, every 5 minutes for one not kept, never within a minute", () => {
    expect(nextAskAt([said("a", "u", 600_000)], 0)).toBe(600_001)
    expect(nextAskAt([said("a", "u", 600_000), said("b", "u", 120_000)], 0)).toBe(120_001)
    expect(nextAskAt([said("a", "u")], 0)).toBe(300_000)
    expect(nextAskAt([said("a", undefined)], 1000)).toBe(301_000)
    expect(nextAskAt([said("a", "u", 5000)], 1000)).toBe(61_000)
    expect(nextAskAt([said("a", "u", 43_200_000), said("b", "u")], 0)).toBe(300_000)
    expect(nextAskAt([], 0)).toBe(300_000)
  })

  it("a provider answers anew with other credentials, or an answer after a failure; not with the same, nor by failing", () => {
    const refused = [said("a", "old"), said("b", undefined)]
    expect(renewedProviders(refused, [said("a", "old"), said("b", undefined)])).toEqual([])
    expect(renewedProviders(refused, [said("a", "new"), said("b", undefined)])).toEqual(["a"])
    expect(renewedProviders(refused, [said("a", undefined), said("b", "new")])).toEqual(["b"])
    expect(renewedProviders(refused, [])).toEqual([])
  })

  it("after a restart: the providers of a stored failure at the spec's version, unless one is marked already", () => {
    const stored: ImageTagStatus = { tag: "v1", phase: "Failed", version: 3, credentialProviders: [{ name: "ecr" }] }
    expect(providersOfStoredFailure(stored, 3)).toEqual(["ecr"])
    expect(providersOfStoredFailure(stored, 4)).toEqual([])
    expect(providersOfStoredFailure({ ...stored, phase: "Succeeded" }, 3)).toEqual([])
    expect(providersOfStoredFailure({ ...stored, credentialProviders: [{ name: "ecr", renewedAt: "2026-01-01T00:00:00Z" }] }, 3)).toEqual(
      []
    )
    expect(providersOfStoredFailure(undefined, 0)).toEqual([])
  })
})

const provider = (name: string, defaultCacheMillis = 0): CredentialProvider => ({
  name,
  matchImages: ["registry.example.com"],
  defaultCacheMillis,
  apiVersion: "credentialprovider.kubelet.k8s.io/v1",
  args: [],
  env: [],
  tokenAttributes: undefined
})

const robot = (user: string, cacheDuration?: string) =>
  answer(
    responseJson({
      ...(cacheDuration === undefined ? {} : { cacheDuration }),
      auth: { "registry.example.com": { username: user, password: `pw-${user}` } }
    })
  )

const withProviders = (providers: ReadonlyArray<CredentialProvider>, behaviours: Record<string, PluginBehaviour>) => {
  const fake = fakePluginRunner(new Map(Object.entries(behaviours)))
  const layer = Layer.effect(CredentialProviders, makeCredentialProviders({ providers }, { runTimeout: "1 minute" })).pipe(
    Layer.provide(fake.layer),
    Layer.provideMerge(testLayer())
  )
  return { fake, layer }
}

/** The registry takes only `good`'s credentials for the image. */
const guard = (good: string) =>
  Effect.flatMap(Effect.service(SimulatedRuntime), (runtime) => runtime.requireAuth(image, (auth) => auth?.username === good))

const once = { pullPolicy: { backoffLimit: 0 } }
const minute = 60_000

/** The daemon's status writes so far. */
const writes = Effect.map(Effect.service(PatchLog), (log) => log.statusPatches.length)

describe("provider renewal: the daemon", () => {
  const expiring = withProviders([provider("robot")], { robot: robot("stale", "10m") })
  it.effect("asks a refused provider again when its answer expires, and marks the failed tag once it answers anew; no write before", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      yield* launch()
      yield* advance(1000)
      const failed = yield* tagStatus(image, "v1")
      expect(failed).toMatchObject({ phase: "Failed", credentialProviders: [{ name: "robot" }] })
      expect(failed?.message).toContain("(tried credential provider robot)")
      expect(JSON.stringify(failed)).not.toContain("pw-")
      const written = yield* writes
      expiring.fake.set("robot", robot("robot", "10m"))
      // The kept answer is the refused one until it expires: nothing is asked or written.
      yield* advance(9 * minute, 1000)
      expect(expiring.fake.runs).toHaveLength(1)
      expect(yield* writes).toBe(written)
      yield* advance(2 * minute, 1000)
      expect(expiring.fake.runs).toHaveLength(2)
      const marked = yield* tagStatus(image, "v1")
      expect(marked).toMatchObject({ phase: "Failed", version: 0, message: failed?.message })
      expect(marked?.credentialProviders).toEqual([{ name: "robot", renewedAt: expect.any(String) }])
      expect(Date.parse(marked!.credentialProviders![0]!.renewedAt!)).toBeGreaterThanOrEqual(10 * minute)
      expect(yield* writes).toBe(written + 1)
      // Once marked it is the controller's: not asked again, nothing more written.
      yield* advance(30 * minute, 10_000)
      expect(expiring.fake.runs).toHaveLength(2)
      expect(yield* writes).toBe(written + 1)
    }).pipe(Effect.scoped, Effect.provide(expiring.layer))
  )

  const unkept = withProviders([provider("robot")], { robot: robot("stale") })
  it.effect("an answer not kept is asked again every 5 minutes; the same refused answer marks nothing", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      yield* launch()
      yield* advance(1000)
      const written = yield* writes
      yield* advance(16 * minute, 10_000)
      // The pull's run, then one at 5, 10 and 15 minutes.
      expect(unkept.fake.runs).toHaveLength(4)
      expect(yield* writes).toBe(written)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders).toEqual([{ name: "robot" }])
      unkept.fake.set("robot", robot("robot"))
      yield* advance(5 * minute, 10_000)
      expect(unkept.fake.runs).toHaveLength(5)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders?.[0]?.renewedAt).toBeDefined()
    }).pipe(Effect.scoped, Effect.provide(unkept.layer))
  )

  const broken = withProviders([provider("robot")], {
    robot: { _tag: "Fail", reason: "failed", message: "its plugin exited with code 1" }
  })
  it.effect("a provider that failed is watched too: failing again is no news, its first answer is", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      yield* launch()
      yield* advance(1000)
      expect(yield* tagStatus(image, "v1")).toMatchObject({ phase: "Failed", credentialProviders: [{ name: "robot" }] })
      yield* advance(6 * minute, 10_000)
      expect(broken.fake.runs).toHaveLength(2)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders).toEqual([{ name: "robot" }])
      broken.fake.set("robot", robot("robot"))
      yield* advance(5 * minute, 10_000)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders?.[0]?.renewedAt).toBeDefined()
    }).pipe(Effect.scoped, Effect.provide(broken.layer))
  )

  const moved = withProviders([provider("robot")], { robot: robot("stale") })
  it.effect("a new version of the tag ends the watch of the old one, and the tag's removal ends its own", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      yield* launch()
      yield* advance(1000)
      yield* setImages({ [image]: { tags: [tag("v1", { ...once, version: 1 })] } })
      yield* advance(1000)
      expect(yield* tagStatus(image, "v1")).toMatchObject({ phase: "Failed", version: 1, credentialProviders: [{ name: "robot" }] })
      expect(moved.fake.runs).toHaveLength(2)
      // One watch (the new version's): one question at 5 minutes.
      yield* advance(5 * minute, 10_000)
      expect(moved.fake.runs).toHaveLength(3)
      yield* setImages({})
      yield* advance(20 * minute, 10_000)
      expect(moved.fake.runs).toHaveLength(3)
    }).pipe(Effect.scoped, Effect.provide(moved.layer))
  )

  const restarted = withProviders([provider("robot")], { robot: robot("stale") })
  it.effect("a tag that failed before the daemon started: the first answer now is the one compared with", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      const api = yield* KubeApi
      const status: ImageTagStatus = {
        tag: "v1",
        phase: "Failed",
        version: 0,
        message: "refused",
        credentialProviders: [{ name: "robot" }]
      }
      yield* api.patch(resources.nodeImage, { name: node }, { status: { imageStatuses: { [image]: { tags: [status] } } } }, "status")
      yield* launch()
      yield* advance(1000)
      // Asked at once, for a baseline; not pulled again.
      expect(restarted.fake.runs).toHaveLength(1)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders).toEqual([{ name: "robot" }])
      yield* advance(5 * minute, 10_000)
      expect(restarted.fake.runs).toHaveLength(2)
      expect((yield* tagStatus(image, "v1"))?.credentialProviders).toEqual([{ name: "robot" }])
      restarted.fake.set("robot", robot("robot"))
      yield* advance(5 * minute, 10_000)
      expect(yield* tagStatus(image, "v1")).toMatchObject({
        phase: "Failed",
        message: "refused",
        credentialProviders: [{ name: "robot", renewedAt: expect.any(String) }]
      })
    }).pipe(Effect.scoped, Effect.provide(restarted.layer))
  )

  const unmatched = withProviders([{ ...provider("robot"), matchImages: ["elsewhere.example.com"] }], { robot: robot("robot") })
  it.effect("a tag no provider matched names none and is not watched", () =>
    Effect.gen(function* () {
      yield* guard("robot")
      yield* createNodeImage({ [image]: { tags: [tag("v1", once)] } })
      yield* launch()
      yield* advance(10 * minute, 10_000)
      const status = yield* tagStatus(image, "v1")
      expect(status?.phase).toBe("Failed")
      expect(status?.credentialProviders).toBeUndefined()
      expect(unmatched.fake.runs).toHaveLength(0)
    }).pipe(Effect.scoped, Effect.provide(unmatched.layer))
  )
})
