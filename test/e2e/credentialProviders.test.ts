// Credential provider plugins on the real containerd: a registry that requires authentication
// (runtime.sh's htpasswd registry), shell-script plugins that hand out its credentials (or those
// of a file the test rewrites), fail or hang, and an in-process daemon with the layer `preheat
// daemon --image-credential-provider-config` builds (its run bound lowered to 2 s; the flag keeps
// the kubelet's minute).
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { beforeAll, expect, it } from "vitest"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { type DaemonOptions, daemonOptions } from "../../src/daemon/options.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { providerConfigYaml, writeProviderPlugins } from "../support/credentialProviderPlugins.ts"
import { eventually } from "../support/eventually.ts"
import { publishImage } from "../support/imageBuilder.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"

const run = randomBytes(4).toString("hex")

describeE2e("credential provider plugins against a real containerd", (e) => {
  const logs: Array<string> = []
  const dir = mkdtempSync(join(tmpdir(), "preheat-e2e-providers-"))
  const binDir = join(dir, "bin")
  mkdirSync(binDir)
  const plugins = writeProviderPlugins(binDir)
  const repository = (name: string) => `${e.authRegistry}/e2e/${name}-${run}`
  const configPath = join(dir, "providers.yaml")
  const credentialsFile = join(dir, "credentials")
  writeFileSync(
    configPath,
    providerConfigYaml(
      [
        {
          name: "static",
          matchImages: [repository("provided")],
          env: { REGISTRY: e.authRegistry, USERNAME: e.user, PASSWORD: e.password, CACHE_DURATION: "1h" }
        },
        // Both print the registry's password among their output, which must never show.
        { name: "failing", matchImages: [repository("failing")], env: { PASSWORD: e.password } },
        { name: "hanging", matchImages: [repository("hanging")] },
        {
          name: "file",
          matchImages: [repository("renewed")],
          env: { REGISTRY: e.authRegistry, CREDENTIALS_FILE: credentialsFile, CACHE_DURATION: "1s" }
        }
      ],
      plugins.runsFile
    )
  )

  const daemons = inProcessDaemons(e, run, { logs, credentialProviders: { configPath, binDir, runTimeout: "2 seconds" } })
  const { exec, tagStatus } = daemons

  beforeAll(async () => {
    await publishImage(
      { host: e.authRegistry, auth: { username: e.user, password: e.password } },
      `e2e/provided-${run}`,
      [{ size: 20_000, seed: `${run}-provided` }],
      ["v1", "v2"]
    )
    await publishImage(
      { host: e.authRegistry, auth: { username: e.user, password: e.password } },
      `e2e/renewed-${run}`,
      [{ size: 20_000, seed: `${run}-renewed` }],
      ["v1"]
    )
  })

  const node = (name: string) => `${name}-${run}`

  /** Runs `body` while a daemon pulls `images` on a NodeImage of its own. */
  const withDaemon = async (
    nodeName: string,
    images: Record<string, unknown>,
    body: () => Promise<void>,
    options: Partial<DaemonOptions> = {}
  ) => {
    const object: KubeObject = { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: nodeName }, spec: { images } }
    await exec(daemons.api.create(resources.nodeImage, object))
    await daemons.withDaemon(daemonOptions({ nodeName, ...options }), body)
  }

  /** The tag's status once `done` holds for it. */
  const until = (nodeName: string, image: string, tag: string, done: (status: ImageTagStatus) => boolean, timeoutMillis = 60_000) =>
    eventually(
      `${image}:${tag} on ${nodeName}`,
      async () => {
        const status = await tagStatus(nodeName, image, tag)
        if (status !== undefined && done(status)) return status
        throw new Error(`still ${JSON.stringify(status)}`)
      },
      timeoutMillis,
      50
    )

  const finished = (nodeName: string, image: string, tag: string, version = 0) =>
    until(nodeName, image, tag, (s) => (s.version ?? 0) === version && (s.phase === "Succeeded" || s.phase === "Failed"))

  it("a job pulls from the registry with the plugin's credentials and no pull secret; one run serves both tags", async () => {
    const image = repository("provided")
    const runsBefore = plugins.runs().length
    await withDaemon(node("provided"), { [image]: { tags: [{ tag: "v1" }, { tag: "v2" }] } }, async () => {
      expect(await finished(node("provided"), image, "v1")).toMatchObject({ phase: "Succeeded" })
      expect(await finished(node("provided"), image, "v2")).toMatchObject({ phase: "Succeeded" })
    })
    expect(await exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.imageStatus(`${image}:v1`))).then(Option.isSome)).toBe(true)
    // The kubelet's request, with the repository as the image; the answer is kept for the registry (1h).
    expect(plugins.runs().slice(runsBefore)).toEqual([
      `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"${image}"} `
    ])
  })

  it("a failing and a hanging plugin fail their tags naming the provider and the image, with Warning events; their output shows nowhere", async () => {
    const failing = repository("failing")
    const hanging = repository("hanging")
    const provided = repository("provided")
    const owner = { kind: "ImagePullJob", namespace: "apps", name: `job-${run}`, uid: "u" }
    const tag = { tag: "v1", pullPolicy: { backoffLimit: 0 }, ownerReferences: [owner] }
    const nodeName = node("broken")
    const logsBefore = logs.length
    await withDaemon(
      nodeName,
      { [failing]: { tags: [tag] }, [hanging]: { tags: [tag] }, [provided]: { tags: [{ tag: "v2" }] } },
      async () => {
        const failed = await finished(nodeName, failing, "v1")
        expect(failed.phase).toBe("Failed")
        expect(failed.message).toMatch(/^failed to pull image ".*": registry refused the credentials: .*401 Unauthorized/)
        expect(failed.message).toContain(
          `(credential provider "failing" failed for image "${failing}": its plugin exited with code 1 (its output is not shown as it may hold credentials))`
        )
        const hung = await finished(nodeName, hanging, "v1")
        expect(hung.phase).toBe("Failed")
        expect(hung.message).toContain(
          `(credential provider "hanging" failed for image "${hanging}": its plugin gave no answer within 2s and was stopped)`
        )
        // Other images go on.
        expect(await finished(nodeName, provided, "v2")).toMatchObject({ phase: "Succeeded" })
      }
    )
    const events = (await exec(daemons.api.list(resources.event))).items.filter((event) =>
      [nodeName, owner.name].includes((event["involvedObject"] as { name?: string }).name ?? "")
    )
    expect(events.map((event) => [event["type"], event["reason"]]).sort()).toEqual([
      ["Warning", "CredentialProviderFailed"],
      ["Warning", "CredentialProviderFailed"],
      ["Warning", "CredentialProviderFailed"],
      ["Warning", "CredentialProviderFailed"]
    ])
    const metrics = await exec(Effect.service(Metrics))
    expect(await exec(metrics.read("preheat_credential_provider_runs_total", { provider: "failing", result: "failed" }))).toBe(1)
    expect(await exec(metrics.read("preheat_credential_provider_runs_total", { provider: "hanging", result: "timeout" }))).toBe(1)
    const stored = await exec(daemons.api.get(resources.nodeImage, { name: nodeName }))
    const outputs = [JSON.stringify(stored["status"]), ...events.map((event) => JSON.stringify(event)), ...logs.slice(logsBefore)]
    expect(logs.length - logsBefore).toBeGreaterThan(2)
    for (const output of outputs) {
      expect(output).not.toContain(e.password)
      expect(output).not.toContain("plugin-stdout-secret")
      expect(output).not.toContain("plugin-stderr-secret")
    }
  })

  it("a plugin whose credentials the registry refused is asked again; its new answer marks the failed tag, and the next version pulls", async () => {
    const image = repository("renewed")
    const nodeName = node("renewed")
    const logsBefore = logs.length
    writeFileSync(credentialsFile, `${e.user}:not-${e.password}\n`)
    const tags = (version: number) => ({ [image]: { tags: [{ tag: "v1", version, pullPolicy: { backoffLimit: 0 } }] } })
    await withDaemon(
      nodeName,
      tags(0),
      async () => {
        const failed = await finished(nodeName, image, "v1")
        expect(failed).toMatchObject({ phase: "Failed", credentialProviders: [{ name: "file" }] })
        expect(failed.message).toMatch(/registry refused the credentials: .*401 Unauthorized.*\(tried credential provider file\)$/)
        // Asked again as its answer (kept 1 s) expires: the same refused answer marks nothing.
        const runsAtFailure = plugins.runs().length
        await new Promise((resolve) => setTimeout(resolve, 2500))
        expect(plugins.runs().length).toBeGreaterThan(runsAtFailure)
        expect((await tagStatus(nodeName, image, "v1"))?.credentialProviders).toEqual([{ name: "file" }])
        writeFileSync(credentialsFile, `${e.user}:${e.password}\n`)
        const marked = await until(nodeName, image, "v1", (s) => s.credentialProviders?.[0]?.renewedAt !== undefined, 30_000)
        expect(marked).toMatchObject({ phase: "Failed", version: 0, message: failed.message })
        // What the controller does with the mark: the tag's next version, which pulls with the new answer.
        const current = await exec(daemons.api.get(resources.nodeImage, { name: nodeName }))
        await exec(daemons.api.update(resources.nodeImage, { ...current, spec: { images: tags(1) } }))
        const pulled = await finished(nodeName, image, "v1", 1)
        expect(pulled).toMatchObject({ phase: "Succeeded", authenticated: true })
        expect(pulled.credentialProviders).toBeUndefined()
      },
      { providerRenewalPace: { minIntervalMillis: 500, uncachedIntervalMillis: 1000 } }
    )
    const stored = await exec(daemons.api.get(resources.nodeImage, { name: nodeName }))
    for (const output of [JSON.stringify(stored["status"]), ...logs.slice(logsBefore)]) expect(output).not.toContain(e.password)
    expect(logs.slice(logsBefore).some((line) => line.includes("credential provider answers anew"))).toBe(true)
  })
})
