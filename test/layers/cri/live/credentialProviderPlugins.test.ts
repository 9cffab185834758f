// The live credential provider plugins: real processes from shell scripts in a temp bin directory,
// through the layer the daemon command builds (config file, bin directory, runs, the bound on a run).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { credentialProvidersLayer } from "../../../../layers/cri/live/credentialProviderPlugins.ts"
import { CredentialProviders } from "../../../../src/cri/credentialProvider/CredentialProviders.ts"
import { Metrics } from "../../../../src/ops/metrics.ts"
import { providerConfigYaml, type TestProvider, writeProviderPlugins } from "../../../support/credentialProviderPlugins.ts"

const root = mkdtempSync(join(tmpdir(), "preheat-providers-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let dirs = 0
/** A bin directory with the scripts and a config naming `providers`. */
const setup = (providers: ReadonlyArray<TestProvider>) => {
  const dir = join(root, String(dirs++))
  const binDir = join(dir, "bin")
  mkdirSync(binDir, { recursive: true })
  const plugins = writeProviderPlugins(binDir)
  const configPath = join(dir, "config.yaml")
  writeFileSync(configPath, providerConfigYaml(providers, plugins.runsFile))
  return { dir, binDir, configPath, ...plugins }
}

const withProviders = <A, E>(
  flags: Parameters<typeof credentialProvidersLayer>[0],
  body: (providers: CredentialProviders["Service"]) => Effect.Effect<A, E, Metrics>
) =>
  Effect.flatMap(Effect.service(CredentialProviders), body).pipe(
    Effect.provide(credentialProvidersLayer(flags).pipe(Layer.provideMerge(Metrics.layerTest)))
  )

const image = "registry.example.com/team/app:v1"

describe("credential provider plugins, run as the kubelet runs them", () => {
  it.live(
    "sends the request on stdin with the provider's args, the daemon's env plus the provider's (which wins), and reads the answer",
    () => {
      const { binDir, configPath, runs } = setup([
        {
          name: "static",
          matchImages: ["registry.example.com"],
          args: ["--region", "eu"],
          env: { REGISTRY: "registry.example.com", USERNAME: "from-config", PASSWORD: "pw" }
        }
      ])
      process.env["USERNAME"] = "from-daemon"
      process.env["PASSWORD_UNUSED"] = "x"
      return withProviders({ configPath, binDir }, (providers) =>
        Effect.gen(function* () {
          const found = yield* providers.lookup(image)
          expect(found.credentials.map((c) => [c.credential.username, c.credential.password, c.source])).toEqual([
            ["from-config", "pw", "credential provider static"]
          ])
          expect(runs()).toEqual([
            '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"registry.example.com/team/app"} --region eu'
          ])
        })
      ).pipe(Effect.ensuring(Effect.sync(() => delete process.env["USERNAME"])))
    }
  )

  it.live("a plugin that exits 1, prints no JSON, is missing or is not executable: named, its output never shown, counted", () => {
    const { binDir, configPath } = setup([
      { name: "failing", matchImages: ["registry.example.com"], env: { PASSWORD: "hunter2" } },
      { name: "bad-json", matchImages: ["registry.example.com"], env: { PASSWORD: "hunter2" } },
      { name: "absent", matchImages: ["registry.example.com"] },
      { name: "not-executable", matchImages: ["registry.example.com"] }
    ])
    writeFileSync(join(binDir, "not-executable"), "#!/bin/sh\nexit 0\n")
    chmodSync(join(binDir, "not-executable"), 0o644)
    return withProviders({ configPath, binDir }, (providers) =>
      Effect.gen(function* () {
        const found = yield* providers.lookup(image)
        const about = 'for image "registry.example.com/team/app"'
        expect(found).toEqual({
          credentials: [],
          problems: [
            `credential provider "failing" failed ${about}: its plugin exited with code 1 (its output is not shown as it may hold credentials)`,
            `credential provider "bad-json" failed ${about}: its plugin printed something that is not JSON`,
            `credential provider "absent" failed ${about}: its plugin was not found in the bin directory`,
            `credential provider "not-executable" failed ${about}: its plugin is not executable`
          ],
          failed: true,
          answers: ["failing", "bad-json", "absent", "not-executable"].map((provider) => ({
            provider,
            print: undefined,
            expiresAt: undefined
          }))
        })
        expect(found.problems.join()).not.toContain("hunter2")
        const metrics = yield* Metrics
        const runsOf = (provider: string, result: string) => metrics.read("preheat_credential_provider_runs_total", { provider, result })
        expect(yield* runsOf("failing", "failed")).toBe(1)
        expect(yield* runsOf("bad-json", "invalid_response")).toBe(1)
        expect(yield* runsOf("absent", "not_found")).toBe(1)
        expect(yield* runsOf("not-executable", "not_found")).toBe(1)
      })
    )
  })

  it.live("a plugin that hangs is stopped at the bound, with everything it started", () => {
    const { binDir, configPath, runs } = setup([{ name: "hanging", matchImages: ["registry.example.com"] }])
    return withProviders({ configPath, binDir, runTimeout: "1 second" }, (providers) =>
      Effect.gen(function* () {
        const found = yield* providers.lookup(image)
        expect(found.problems).toEqual([
          'credential provider "hanging" failed for image "registry.example.com/team/app": its plugin gave no answer within 1s and was stopped'
        ])
        const pgid = Number(
          runs()
            .find((line) => line.startsWith("pgid "))
            ?.slice(5)
        )
        expect(pgid).toBeGreaterThan(0)
        // The group (the shell and its sleep) is gone once the kill is delivered and the shell reaped.
        const gone = () => {
          try {
            process.kill(-pgid, 0)
            return false
          } catch {
            return true
          }
        }
        for (let waited = 0; !gone() && waited < 5000; waited += 50) yield* Effect.sleep("50 millis")
        expect(gone()).toBe(true)
      })
    )
  })

  it.live("reads a directory of config files in name order", () => {
    const { dir, binDir, runsFile } = setup([])
    const configDir = join(dir, "conf.d")
    mkdirSync(configDir)
    const env = { REGISTRY: "registry.example.com", PASSWORD: "pw" }
    writeFileSync(
      join(configDir, "20-second.yaml"),
      providerConfigYaml([{ name: "static", matchImages: ["registry.example.com"], env: { ...env, USERNAME: "b" } }], runsFile)
    )
    writeFileSync(
      join(configDir, "10-first.json"),
      JSON.stringify({
        kind: "CredentialProviderConfig",
        apiVersion: "kubelet.config.k8s.io/v1",
        providers: [
          { name: "failing", matchImages: ["other.io"], defaultCacheDuration: "0s", apiVersion: "credentialprovider.kubelet.k8s.io/v1" }
        ]
      })
    )
    writeFileSync(join(configDir, "notes.txt"), "not a config")
    return withProviders({ configPath: configDir, binDir }, (providers) =>
      Effect.map(providers.lookup(image), (found) => expect(found.credentials.map((c) => c.credential.username)).toEqual(["b"]))
    )
  })

  it.live("the daemon does not start with a config it cannot read or use, or without the bin directory", () =>
    Effect.gen(function* () {
      const { dir, binDir, configPath } = setup([{ name: "static", matchImages: ["registry.example.com"] }])
      const failure = (flags: Parameters<typeof credentialProvidersLayer>[0]) =>
        Effect.map(Effect.exit(withProviders(flags, () => Effect.void)), (exit) =>
          Exit.isFailure(exit) ? String((Exit.findErrorOption(exit) as { value?: { message?: string } }).value?.message) : "started"
        )
      expect(yield* failure({ configPath: join(dir, "absent.yaml"), binDir })).toBe(
        `--image-credential-provider-config ${join(dir, "absent.yaml")}: ENOENT: no such file or directory, stat '${join(dir, "absent.yaml")}'`
      )
      expect(yield* failure({ configPath, binDir: join(dir, "no-bin") })).toBe(
        `--image-credential-provider-bin-dir ${join(dir, "no-bin")}: plugin binary directory does not exist`
      )
      const bad = join(dir, "bad.yaml")
      writeFileSync(bad, "kind: CredentialProviderConfig\napiVersion: kubelet.config.k8s.io/v1\nproviders: []\n")
      expect(yield* failure({ configPath: bad, binDir })).toBe(
        `invalid credential provider config: ${bad}: providers: Required value: at least 1 item in plugins is required`
      )
      const empty = join(dir, "empty.d")
      mkdirSync(empty)
      expect(yield* failure({ configPath: empty, binDir })).toBe(
        `--image-credential-provider-config ${empty}: no configuration files found in directory ${empty}`
      )
    })
  )
})
