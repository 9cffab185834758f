/**
 * Issue 37 through kubectl on `preheat dev`: the simulated registry host `private.*` refuses
 * anonymous pulls, and `--image-credential-provider-config` / `--image-credential-provider-bin-dir`
 * give every simulated node's daemon the kubelet's credential provider plugins (shell scripts
 * here): a job pulls with a plugin's credentials and no pull secret, one no plugin serves fails
 * unauthorized saying what was tried, and one whose plugin fails names the provider and the image
 * with a Warning event.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { mkdtempSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { providerConfigYaml, writeProviderPlugins } from "../support/credentialProviderPlugins.ts"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const job = (name: string, image: string) => `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata:
  name: ${name}
  namespace: default
spec:
  image: ${image}
  parallelism: 2
  pullPolicy:
    backoffLimit: 0
  completionPolicy:
    type: Always
`

interface TagStatus {
  readonly phase?: string
  readonly message?: string
}

describe("preheat dev: credential provider plugins", () => {
  it("a private registry pulled with a plugin's credentials, without one, and with a failing plugin", async () => {
    const dir = mkdtempSync(join(tmpdir(), "preheat-dev-providers-"))
    const binDir = join(dir, "bin")
    mkdirSync(binDir)
    const plugins = writeProviderPlugins(binDir)
    const config = join(dir, "providers.yaml")
    writeFileSync(
      config,
      providerConfigYaml(
        [
          {
            name: "static",
            matchImages: ["private.example/team"],
            env: { REGISTRY: "private.example", USERNAME: "robot", PASSWORD: "dev-password" }
          },
          { name: "failing", matchImages: ["private.example/broken"], env: { PASSWORD: "dev-password" } }
        ],
        plugins.runsFile
      )
    )
    await withDev(
      {
        nodes: 2,
        prefix: "preheat-dev-providers-",
        flags: ["--image-credential-provider-config", config, "--image-credential-provider-bin-dir", binDir]
      },
      async (dev) => {
        const { kubectl } = dev
        const phase = (name: string) =>
          kubectl(["get", "ipj", name, "-n", "default", "-o", "jsonpath={.status.succeeded}/{.status.failed}"])
        const tagOf = async (node: string, image: string): Promise<TagStatus | undefined> => {
          const statuses = JSON.parse(
            (await kubectl(["get", "nodeimage", node, "-o", "jsonpath={.status.imageStatuses}"])) || "{}"
          ) as Record<string, { tags?: ReadonlyArray<TagStatus> }>
          return statuses[image]?.tags?.[0]
        }

        await dev.apply("provided", job("provided", "private.example/team/app:1"))
        await eventually(
          "the job pulled with the plugin's credentials",
          async () => ((await phase("provided")) === "2/0" ? true : undefined),
          120_000
        )
        // One run per node: each node's daemon asks its own plugin, as on a real cluster.
        expect(plugins.runs()).toEqual([
          '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"private.example/team/app"} ',
          '{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"private.example/team/app"} '
        ])

        await dev.apply("unserved", job("unserved", "private.example/other/app:1"))
        await eventually("the job no plugin serves to fail", async () => ((await phase("unserved")) === "0/2" ? true : undefined), 120_000)
        expect((await tagOf("node-1", "private.example/other/app"))?.message).toBe(
          'failed to pull image "private.example/other/app:1": registry refused the credentials: simulated registry: 401 Unauthorized ' +
            "(tried anonymously: no pull secret or credential provider had credentials for it)"
        )

        await dev.apply("broken", job("broken", "private.example/broken/app:1"))
        await eventually("the job whose plugin fails to fail", async () => ((await phase("broken")) === "0/2" ? true : undefined), 120_000)
        const broken = await tagOf("node-2", "private.example/broken/app")
        expect(broken?.message).toContain(
          '(credential provider "failing" failed for image "private.example/broken/app": its plugin exited with code 1 (its output is not shown as it may hold credentials))'
        )
        const events = await kubectl([
          "get",
          "events",
          "-A",
          "--field-selector",
          "reason=CredentialProviderFailed",
          "-o",
          "jsonpath={.items[*].type}"
        ])
        expect(events.split(" ").filter((t) => t === "Warning").length).toBeGreaterThanOrEqual(2)
        expect(broken?.message).not.toContain("dev-password")
        expect(dev.output()).not.toContain("dev-password")
      }
    )
  })
})
