// The credential providers on simulated time with a fake plugin runner: which provider is asked,
// what it is sent, how its answers are kept (the kubelet's cache keys and durations), runs shared
// by concurrent asks, the bound on a run, and failures named without the plugin's output.
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { CredentialProvider } from "../../src/cri/credentialProvider/config.ts"
import { samePrint } from "../../src/cri/credentialProvider/answerPrint.ts"
import { makeCredentialProviders } from "../../src/cri/credentialProvider/CredentialProviders.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { answer, fakePluginRunner, type PluginBehaviour, responseJson } from "../support/fakePluginRunner.ts"

const v1 = "credentialprovider.kubelet.k8s.io/v1"

const provider = (name: string, fields: Partial<CredentialProvider> = {}): CredentialProvider => ({
  name,
  matchImages: ["registry.example.com"],
  defaultCacheMillis: 0,
  apiVersion: v1,
  args: [],
  env: [],
  tokenAttributes: undefined,
  ...fields
})

const creds = (user: string, key = "registry.example.com") => ({ [key]: { username: user, password: `pw-${user}` } })

/** The providers over a fake runner, with the runs it recorded. */
const setup = (
  providers: ReadonlyArray<CredentialProvider>,
  behaviours: Record<string, PluginBehaviour>,
  runTimeout: Duration.Input = "1 minute"
) =>
  Effect.gen(function* () {
    const fake = fakePluginRunner(new Map(Object.entries(behaviours)))
    const service = yield* makeCredentialProviders({ providers }, { runTimeout }).pipe(Effect.provide(fake.layer))
    const users = (image: string) => Effect.map(service.lookup(image), (found) => found.credentials.map((c) => c.credential.username))
    return { service, fake, users }
  })

const run = <A, E>(body: Effect.Effect<A, E, Metrics | import("effect").Scope.Scope>) =>
  body.pipe(Effect.scoped, Effect.provide(Metrics.layerTest))

describe("credential providers: which are asked, with what", () => {
  // The kubelet's Test_Provide cases (plugin_test.go): matchImages, the answer's key, cacheKeyType.
  it.effect.each([
    ["exact host, Registry key", ["test.registry.io"], "Registry", "test.registry.io", "test.registry.io/foo/bar"],
    ["exact image, Image key", ["test.registry.io/foo/bar"], "Image", "test.registry.io/foo/bar", "test.registry.io/foo/bar"],
    ["exact host, Global key", ["test.registry.io"], "Global", "test.registry.io", "test.registry.io/app"],
    ["glob with port, Registry key", ["*.registry.io:8080"], "Registry", "*.registry.io:8080", "test.registry.io:8080/foo"],
    ["two globs, Image key", ["*.*.registry.io"], "Image", "*.*.registry.io", "foo.bar.registry.io/foo/bar"],
    ["glob, Global key", ["*.registry.io"], "Global", "*.registry.io", "test.registry.io/app"]
  ] as const)("Test_Provide: %s", ([, matchImages, cacheKeyType, key, image]) =>
    run(
      Effect.gen(function* () {
        const { users } = yield* setup([provider("p", { matchImages })], {
          p: answer(responseJson({ cacheKeyType, auth: { [key]: { username: "user", password: "password" } } }))
        })
        expect(yield* users(image)).toEqual(["user"])
      })
    )
  )

  it.effect("asks no provider whose matchImages miss the image, and sends the kubelet's request to the one that matches", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup(
          [
            provider("hub", { matchImages: ["docker.io"], args: ["--v=5"], env: [{ name: "AWS_REGION", value: "eu-west-1" }] }),
            provider("other", { matchImages: ["*.example.org"] })
          ],
          { hub: answer(responseJson({ auth: creds("hub", "docker.io") })), other: answer(responseJson({ auth: creds("o") })) }
        )
        expect(yield* users("nginx:1.25")).toEqual(["hub"])
        expect(fake.runs).toEqual([
          {
            name: "hub",
            args: ["--v=5"],
            env: [{ name: "AWS_REGION", value: "eu-west-1" }],
            // The kubelet's request: the repository without tag (parsers.ParseImageName), the provider's apiVersion.
            stdin: `{"kind":"CredentialProviderRequest","apiVersion":"${v1}","image":"docker.io/library/nginx"}\n`,
            image: "docker.io/library/nginx"
          }
        ])
        expect(yield* users("quay.io/app:1")).toEqual([])
        expect(fake.runs).toHaveLength(1)
      })
    )
  )

  it.effect("orders every provider's credentials by the keyring: most specific key first, then the providers' order", () =>
    run(
      Effect.gen(function* () {
        const { service } = yield* setup([provider("first"), provider("second"), provider("third")], {
          first: answer(responseJson({ auth: creds("host-1") })),
          second: answer(responseJson({ auth: { ...creds("team", "registry.example.com/team"), ...creds("elsewhere", "other.io") } })),
          third: answer(responseJson({ auth: creds("host-3") }))
        })
        const found = yield* service.lookup("registry.example.com/team/app:v1")
        expect(found.credentials.map((c) => [c.credential.username, c.source])).toEqual([
          ["team", "credential provider second"],
          ["host-1", "credential provider first"],
          ["host-3", "credential provider third"]
        ])
        expect(found.problems).toEqual([])
      })
    )
  )

  it.effect("a provider that needs a pod's service account is never run; one that does not is run without a token", () =>
    run(
      Effect.gen(function* () {
        const attributes = (requireServiceAccount: boolean) => ({ serviceAccountTokenAudience: "aud", requireServiceAccount })
        const { fake, service } = yield* setup(
          [provider("needs-sa", { tokenAttributes: attributes(true) }), provider("optional-sa", { tokenAttributes: attributes(false) })],
          { "needs-sa": answer(responseJson({ auth: creds("sa") })), "optional-sa": answer(responseJson({ auth: creds("plain") })) }
        )
        const found = yield* service.lookup("registry.example.com/app:1")
        expect(found.credentials.map((c) => c.credential.username)).toEqual(["plain"])
        expect(fake.runs.map((r) => [r.name, r.stdin.includes("serviceAccountToken")])).toEqual([["optional-sa", false]])
        expect(found.problems).toEqual([
          'credential provider "needs-sa" was not asked for image "registry.example.com/app": it requires a pod\'s service account ' +
            "(tokenAttributes.requireServiceAccount) and preheat pulls for no pod"
        ])
        expect(found.failed).toBe(false)
      })
    )
  )

  it.effect("an answer whose keys miss the image is said so", () =>
    run(
      Effect.gen(function* () {
        const { service } = yield* setup([provider("p")], { p: answer(responseJson({ auth: creds("x", "registry.example.com/other") })) })
        const found = yield* service.lookup("registry.example.com/app:1")
        expect(found.credentials).toEqual([])
        expect(found.problems).toEqual(['credential provider "p" answered with no credentials for image "registry.example.com/app"'])
      })
    )
  )
})

describe("credential providers: answers kept as the kubelet keeps them", () => {
  it.effect(
    "Registry: one run for every image of the registry until cacheDuration has passed (expired only once the clock is past it)",
    () =>
      run(
        Effect.gen(function* () {
          const { fake, users } = yield* setup([provider("p")], {
            p: answer(responseJson({ cacheKeyType: "Registry", cacheDuration: "10m", auth: creds("u") }))
          })
          expect(yield* users("registry.example.com/a:1")).toEqual(["u"])
          expect(yield* users("registry.example.com/b:2")).toEqual(["u"])
          yield* TestClock.adjust("10 minutes")
          expect(yield* users("registry.example.com/c:3")).toEqual(["u"])
          expect(fake.runs).toHaveLength(1)
          yield* TestClock.adjust("1 millis")
          expect(yield* users("registry.example.com/a:1")).toEqual(["u"])
          expect(fake.runs).toHaveLength(2)
        })
      )
  )

  it.effect("Image: kept for that repository only (any tag); another repository runs again", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup([provider("p")], {
          p: answer(responseJson({ cacheKeyType: "Image", cacheDuration: "1h", auth: creds("u") }))
        })
        yield* users("registry.example.com/a:1")
        yield* users("registry.example.com/a:2")
        yield* users(`registry.example.com/a@sha256:${"0".repeat(64)}`)
        expect(fake.runs.map((r) => r.image)).toEqual(["registry.example.com/a"])
        yield* users("registry.example.com/b:1")
        expect(fake.runs.map((r) => r.image)).toEqual(["registry.example.com/a", "registry.example.com/b"])
      })
    )
  )

  it.effect("Global: kept for every image the provider matches, even on another registry", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup([provider("p", { matchImages: ["*.example.com"] })], {
          p: answer(responseJson({ cacheKeyType: "Global", cacheDuration: "1h", auth: creds("u", "*.example.com") }))
        })
        expect(yield* users("one.example.com/a:1")).toEqual(["u"])
        expect(yield* users("two.example.com/b:1")).toEqual(["u"])
        expect(fake.runs).toHaveLength(1)
      })
    )
  )

  it.effect("looks up the image's key before the registry's and the global one", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup([provider("p")], {
          p: answer(responseJson({ cacheKeyType: "Image", cacheDuration: "1h", auth: creds("image-a") }))
        })
        yield* users("registry.example.com/a:1")
        fake.set("p", answer(responseJson({ cacheKeyType: "Global", cacheDuration: "1h", auth: creds("global") })))
        expect(yield* users("registry.example.com/b:1")).toEqual(["global"])
        expect(yield* users("registry.example.com/a:1")).toEqual(["image-a"])
        expect(fake.runs).toHaveLength(2)
      })
    )
  )

  it.effect("no cacheDuration: the provider's defaultCacheDuration; cacheDuration 0, or none with a default of 0: never kept", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup(
          [
            provider("default-5m", { defaultCacheMillis: 300_000, matchImages: ["a.example.com"] }),
            provider("zero", { defaultCacheMillis: 300_000, matchImages: ["b.example.com"] }),
            provider("default-0", { matchImages: ["c.example.com"] })
          ],
          {
            "default-5m": answer(responseJson({ auth: creds("a", "a.example.com") })),
            zero: answer(responseJson({ cacheDuration: "0s", auth: creds("b", "b.example.com") })),
            "default-0": answer(responseJson({ auth: creds("c", "c.example.com") }))
          }
        )
        for (const image of ["a.example.com/x", "b.example.com/x", "c.example.com/x"]) {
          yield* users(image)
          yield* users(image)
        }
        yield* TestClock.adjust("5 minutes")
        yield* users("a.example.com/x")
        expect(fake.runs.map((r) => r.name)).toEqual(["default-5m", "zero", "zero", "default-0", "default-0"])
        yield* TestClock.adjust("1 millis")
        yield* users("a.example.com/x")
        expect(fake.runs.filter((r) => r.name === "default-5m")).toHaveLength(2)
      })
    )
  )

  it.effect("a failed run is not kept: the next ask runs the plugin again", () =>
    run(
      Effect.gen(function* () {
        const { fake, service, users } = yield* setup([provider("p", { defaultCacheMillis: 3_600_000 })], {
          p: { _tag: "Fail", reason: "failed", message: "its plugin exited with code 1" }
        })
        expect((yield* service.lookup("registry.example.com/a:1")).failed).toBe(true)
        fake.set("p", answer(responseJson({ auth: creds("u") })))
        expect(yield* users("registry.example.com/a:1")).toEqual(["u"])
        expect(yield* users("registry.example.com/a:1")).toEqual(["u"])
        expect(fake.runs).toHaveLength(2)
      })
    )
  )
})

describe("credential providers: what each answered, as the daemon remembers a refused answer", () => {
  it.effect("a digest of the credentials for the image (redacted when printed), and when the kept answer expires", () =>
    run(
      Effect.gen(function* () {
        const { fake, service } = yield* setup(
          [provider("kept", { defaultCacheMillis: 600_000 }), provider("fresh"), provider("broken"), provider("other")],
          {
            kept: answer(responseJson({ auth: creds("a") })),
            fresh: answer(responseJson({ auth: creds("a") })),
            broken: { _tag: "Fail", reason: "failed", message: "its plugin exited with code 1" },
            other: answer(responseJson({ auth: creds("x", "elsewhere.example.com") }))
          }
        )
        yield* TestClock.adjust("1 second")
        const first = (yield* service.lookup("registry.example.com/app:1")).answers
        expect(first.map((a) => [a.provider, a.expiresAt])).toEqual([
          ["kept", 601_000],
          ["fresh", undefined],
          ["broken", undefined],
          ["other", undefined]
        ])
        const [kept, fresh, broken, other] = first
        // The same credentials from two providers print alike; a failure prints nothing; an answer without a matching key is one too.
        expect(samePrint(kept!.print!, fresh!.print!)).toBe(true)
        expect(broken!.print).toBeUndefined()
        expect(samePrint(other!.print!, kept!.print!)).toBe(false)
        expect(String(kept!.print)).toBe("<redacted>")
        expect(JSON.stringify(first)).not.toContain(Redacted.value(kept!.print!))

        fake.set("fresh", answer(responseJson({ auth: creds("b") })))
        fake.set("kept", answer(responseJson({ auth: creds("b") })))
        const second = (yield* service.lookup("registry.example.com/app:2")).answers
        // The kept answer is the same until it expires; the one not kept is new.
        expect(samePrint(second[0]!.print!, kept!.print!)).toBe(true)
        expect(second[0]!.expiresAt).toBe(601_000)
        expect(samePrint(second[1]!.print!, fresh!.print!)).toBe(false)
      })
    )
  )
})

describe("credential providers: one run at a time per image", () => {
  it.effect("asks for the same repository at once share one run; another repository has its own (the kubelet's single flight)", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup([provider("p")], { p: answer(responseJson({ cacheDuration: "0s", auth: creds("u") }), 1000) })
        const asks = yield* Effect.forkChild(
          Effect.all([users("registry.example.com/a:1"), users("registry.example.com/a:2"), users("registry.example.com/b:1")], {
            concurrency: "unbounded"
          })
        )
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(asks)).toEqual([["u"], ["u"], ["u"]])
        expect(fake.runs.map((r) => r.image)).toEqual(["registry.example.com/a", "registry.example.com/b"])
      })
    )
  )

  it.effect("one asker giving up leaves the run to the others", () =>
    run(
      Effect.gen(function* () {
        const { fake, users } = yield* setup([provider("p")], { p: answer(responseJson({ auth: creds("u") }), 1000) })
        const first = yield* Effect.forkChild(users("registry.example.com/a:1"))
        const second = yield* Effect.forkChild(users("registry.example.com/a:1"))
        yield* TestClock.adjust("500 millis")
        yield* Fiber.interrupt(first)
        yield* TestClock.adjust("500 millis")
        expect(yield* Fiber.join(second)).toEqual(["u"])
        expect(fake.runs).toHaveLength(1)
      })
    )
  )

  it.effect("a run is bounded: a plugin that never answers fails the ask after the timeout, named and counted", () =>
    run(
      Effect.gen(function* () {
        const { service } = yield* setup([provider("slow")], { slow: { _tag: "Hang" } })
        const ask = yield* Effect.forkChild(service.lookup("registry.example.com/app:1"))
        yield* TestClock.adjust("59 seconds")
        expect(ask.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 second")
        const found = yield* Fiber.join(ask)
        expect(found).toEqual({
          credentials: [],
          problems: [
            'credential provider "slow" failed for image "registry.example.com/app": its plugin gave no answer within 1m and was stopped'
          ],
          failed: true,
          answers: [{ provider: "slow", print: undefined, expiresAt: undefined }]
        })
        const metrics = yield* Metrics
        expect(yield* metrics.read("preheat_credential_provider_runs_total", { provider: "slow", result: "timeout" })).toBe(1)
      })
    )
  )
})

describe("credential providers: failures", () => {
  it.effect.each([
    [
      "missing",
      { _tag: "Fail", reason: "not_found", message: "its plugin was not found in the bin directory" },
      "not_found",
      "its plugin was not found in the bin directory"
    ],
    [
      "exits non-zero",
      { _tag: "Fail", reason: "failed", message: "its plugin exited with code 1" },
      "failed",
      "its plugin exited with code 1"
    ],
    ["prints no JSON", answer("user=admin password=hunter2-secret"), "invalid_response", "its plugin printed something that is not JSON"],
    [
      "answers another apiVersion",
      answer(responseJson({ apiVersion: "credentialprovider.kubelet.k8s.io/v1beta1", auth: creds("hunter2-secret") })),
      "invalid_response",
      "its plugin answered with apiVersion credentialprovider.kubelet.k8s.io/v1beta1 where the config asks for credentialprovider.kubelet.k8s.io/v1"
    ],
    [
      "answers no valid cacheKeyType",
      answer(responseJson({ cacheKeyType: "hunter2-secret", auth: creds("u") })),
      "invalid_response",
      "its plugin did not return a valid cacheKeyType (Image, Registry or Global)"
    ]
  ] as const)("a plugin that %s: the ask fails, named, counted, other providers still answer", ([, behaviour, result, reason]) =>
    run(
      Effect.gen(function* () {
        const { service } = yield* setup([provider("broken"), provider("good")], {
          broken: behaviour as PluginBehaviour,
          good: answer(responseJson({ auth: creds("good") }))
        })
        const found = yield* service.lookup("registry.example.com/app:1")
        expect(found.credentials.map((c) => c.credential.username)).toEqual(["good"])
        expect(found.problems).toEqual([`credential provider "broken" failed for image "registry.example.com/app": ${reason}`])
        expect(found.problems.join()).not.toContain("hunter2")
        expect(found.failed).toBe(true)
        const metrics = yield* Metrics
        expect(yield* metrics.read("preheat_credential_provider_runs_total", { provider: "broken", result })).toBe(1)
        expect(yield* metrics.read("preheat_credential_provider_runs_total", { provider: "good", result: "succeeded" })).toBe(1)
      })
    )
  )
})
