import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { RegistryAuth } from "../../src/cri/CriRuntime.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import {
  advance,
  createNodeImage,
  events,
  launch,
  nodeStatus,
  secret,
  secretNamespace,
  tag,
  tagStatus,
  testLayer
} from "./support/daemonHarness.ts"

const image = "registry.example.com/team/app"
const ref = (name: string, namespace = secretNamespace) => ({ namespace, name })

/** Makes the registry accept only `good`, recording the usernames it was offered in order. */
const guardRegistry = (good: string | undefined) =>
  Effect.gen(function* () {
    const fake = yield* SimulatedRuntime
    const offered: Array<string> = []
    yield* fake.requireAuth(image, (auth: RegistryAuth | undefined) => {
      offered.push(auth?.username ?? "(anonymous)")
      return auth !== undefined && auth.username === good
    })
    return offered
  })

const createSecrets = (...secrets: ReadonlyArray<ReturnType<typeof secret>>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (const s of secrets) yield* api.create(resources.secret, s)
  })

describe("daemon: pull secrets", () => {
  it.effect("tries every matching credential in order; a refusal moves on to the next", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const offered = yield* guardRegistry("good")
      yield* createSecrets(
        secret("first", { "registry.example.com": { username: "bad", password: "nope" } }),
        secret("second", { "https://registry.example.com": { username: "good", password: "yes" } })
      )
      yield* createNodeImage({ [image]: { pullSecrets: [ref("first"), ref("second")], tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect(offered).toEqual(["bad", "good"])
      expect((yield* fake.pulls).map((p) => p.authenticated)).toEqual([true, true])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the most specific registry key comes first", () =>
    Effect.gen(function* () {
      const offered = yield* guardRegistry("team")
      yield* createSecrets(
        secret("host", { "registry.example.com": { username: "host", password: "p" } }),
        secret("path", { "registry.example.com/team": { username: "team", password: "p" } })
      )
      yield* createNodeImage({ [image]: { pullSecrets: [ref("host"), ref("path")], tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect(offered).toEqual(["team"])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("pulls anonymously when no credential matches the registry", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createSecrets(secret("other", { "other.example.com": { username: "u", password: "p" } }))
      yield* createNodeImage({ [image]: { pullSecrets: [ref("other")], tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect((yield* fake.pulls).map((p) => p.authenticated)).toEqual([false])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("never falls back to anonymous when every matching credential is refused", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const offered = yield* guardRegistry(undefined)
      yield* createSecrets(
        secret("a", { "registry.example.com": { username: "a", password: "p" } }),
        secret("b", { "registry.example.com": { username: "b", password: "p" } })
      )
      yield* createNodeImage({
        [image]: { pullSecrets: [ref("a"), ref("b")], tags: [tag("v1", { pullPolicy: { backoffLimit: 1 } })] }
      })
      yield* launch()
      yield* advance(2000)
      expect(offered).toEqual(["a", "b", "a", "b"])
      expect((yield* fake.pulls).every((p) => p.authenticated)).toBe(true)
      expect(yield* tagStatus(image, "v1")).toMatchObject({
        phase: "Failed",
        message:
          `failed to pull image "${image}:v1" after 2 attempts: registry refused the credentials: ` +
          "simulated registry: 401 Unauthorized (tried pull secret preheat-daemon-config/a, pull secret preheat-daemon-config/b)"
      })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a missing, foreign or malformed secret is named in the failure, and the pull goes on without it", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* guardRegistry("good")
      const api = yield* KubeApi
      yield* api.create(resources.secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "opaque", namespace: secretNamespace },
        type: "Opaque",
        data: {}
      })
      yield* createNodeImage({
        [image]: {
          // Upstream's schema requires neither field: a reference without them is named too.
          pullSecrets: [ref("absent"), ref("elsewhere", "apps"), ref("opaque"), { namespace: secretNamespace }, {}],
          tags: [tag("v1", { pullPolicy: { backoffLimit: 0 } })]
        }
      })
      yield* launch()
      expect((yield* fake.pulls).map((p) => p.authenticated)).toEqual([false])
      const message = (yield* tagStatus(image, "v1"))?.message ?? ""
      expect(message).toContain("pull secret preheat-daemon-config/absent not found")
      expect(message).toContain("pull secret apps/elsewhere is outside the daemon's namespace preheat-daemon-config")
      expect(message).toContain("pull secret preheat-daemon-config/opaque is unusable")
      expect(message).toContain("pull secret preheat-daemon-config/ has no name")
      expect(message).toContain("pull secret / has no name")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a copy that is no usable docker config is skipped: the pull goes on with the other secrets", () =>
    Effect.gen(function* () {
      const offered = yield* guardRegistry("good")
      const api = yield* KubeApi
      const garbage = (name: string, config: string) =>
        api.create(resources.secret, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace: secretNamespace },
          type: "kubernetes.io/dockerconfigjson",
          data: { ".dockerconfigjson": Buffer.from(config).toString("base64") }
        })
      yield* garbage("not-json", "{auths")
      yield* garbage("no-auths", JSON.stringify({ credsStore: "desktop" }))
      yield* garbage("bad-auth", JSON.stringify({ auths: { "registry.example.com": { auth: "not base64!" } } }))
      yield* garbage("empty-key", JSON.stringify({ auths: { "": { username: "u", password: "p" } } }))
      yield* createSecrets(secret("good", { "registry.example.com": { username: "good", password: "p" } }))
      const refs = ["not-json", "no-auths", "bad-auth", "empty-key", "good"].map((name) => ref(name))
      yield* createNodeImage({ [image]: { pullSecrets: refs, tags: [tag("v1")] } })
      yield* launch()
      yield* advance(1000)
      expect(offered).toEqual(["good"])
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a secret fixed between attempts is used by the next attempt", () =>
    Effect.gen(function* () {
      yield* guardRegistry("good")
      yield* createSecrets(secret("creds", { "registry.example.com": { username: "bad", password: "p" } }))
      yield* createNodeImage({ [image]: { pullSecrets: [ref("creds")], tags: [tag("v1")] } })
      yield* launch({ pullingWriteDelay: 0 })
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Pulling")
      const api = yield* KubeApi
      const current = yield* api.get(resources.secret, { namespace: secretNamespace, name: "creds" })
      const fixed = secret("creds", { "registry.example.com": { username: "good", password: "p" } })
      yield* api.update(resources.secret, { ...current, data: fixed["data"] })
      yield* advance(2000)
      expect((yield* tagStatus(image, "v1"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})

describe("daemon: credentials never leak", () => {
  const password = "s3cr3t-Pa55w0rd-never-print"
  const username = "robot"

  it.effect("a failing authenticated pull shows the password in no status field, event or log line", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      yield* Effect.gen(function* () {
        yield* guardRegistry(undefined)
        yield* createSecrets(secret("creds", { "registry.example.com": { username, password } }))
        yield* createNodeImage({
          [image]: {
            pullSecrets: [ref("creds")],
            tags: [
              tag("v1", {
                pullPolicy: { backoffLimit: 2 },
                ownerReferences: [{ kind: "ImagePullJob", namespace: "apps", name: "job", uid: "u1" }]
              })
            ]
          }
        })
        yield* launch()
        yield* advance(5000)
      }).pipe(Effect.provide(loggingLayer({ format: "json", level: "Debug", sink: (line) => lines.push(line) })))

      const status = yield* nodeStatus
      expect(status.imageStatuses?.[image]?.tags[0]).toMatchObject({ phase: "Failed" })
      const recorded = yield* events
      expect(recorded.map((e) => e.reason)).toEqual(["PullImageFailed", "PullImageFailed"])
      expect(lines.length).toBeGreaterThanOrEqual(3)
      const forbidden = [password, Buffer.from(`${username}:${password}`).toString("base64"), Buffer.from(password).toString("base64")]
      const outputs = [JSON.stringify(status), ...recorded.map((e) => JSON.stringify(e)), ...lines]
      for (const output of outputs) for (const secretText of forbidden) expect(output).not.toContain(secretText)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
