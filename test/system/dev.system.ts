/**
 * `preheat dev` (issue 6): the README's run command. One process serves a local cluster of 5
 * simulated nodes; every example applies with kubectl and finishes; Ctrl-C stops it. It runs from
 * the single executable and from the bundle on Deno.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { eventually } from "../support/eventually.ts"
import { denoLauncher, nodeLauncher, withDev } from "./devProcess.ts"

const root = resolve(import.meta.dirname, "../..")

describe.each([nodeLauncher, denoLauncher])("preheat dev from $name", (launcher) => {
  it("starts a local cluster, runs every example to completion with kubectl, and stops on Ctrl-C", async () => {
    await withDev({ launcher, nodes: 5, prefix: "preheat-dev-" }, async (dev) => {
      const { dir, kubeconfig, kubectl } = dev
      expect(dev.output()).toContain(`export KUBECONFIG=${kubeconfig}`)
      expect((await kubectl(["get", "nodes", "-o", "name"])).trim().split("\n")).toHaveLength(5)
      await eventually("a NodeImage per node", async () =>
        (await kubectl(["get", "nodeimages", "-o", "name"])).trim().split("\n").length === 5 ? true : undefined
      )

      // The controller re-creates a deleted NodeImage at once; the DELETE still answers the object it
      // deleted, so kubectl, which waits for that uid to go, returns instead of waiting for the new one.
      const uid = () => kubectl(["get", "nodeimage", "node-1", "-o", "jsonpath={.metadata.uid}"])
      const before = await uid()
      expect(await kubectl(["delete", "nodeimage", "node-1", "--timeout=30s"])).toContain('"node-1" deleted')
      await eventually("node-1's NodeImage re-created", async () => ((await uid().catch(() => before)) !== before ? true : undefined))

      // The podSelector example pulls where Pods labelled app=web, tier=frontend run.
      const placement = JSON.stringify({ spec: { nodeName: "node-2" } })
      await kubectl(["run", "web", "--image=nginx:1.25.3", "--labels=app=web,tier=frontend", `--overrides=${placement}`])
      const examples = join(root, "deploy/examples")
      for (const example of readdirSync(examples)
        .filter((f) => f.endsWith(".yaml"))
        .sort()) {
        await kubectl(["apply", "-f", join(examples, example)])
      }
      for (const job of ["job-with-always", "job-with-podselector", "job-with-secret"]) {
        await kubectl(["wait", `ipj/${job}`, "--for=jsonpath={.status.completionTime}", "--timeout=90s"])
      }
      const listJob = "imagelistpulljob/list-job-with-always"
      await kubectl(["wait", listJob, "--for=jsonpath={.status.completionTime}", "--timeout=90s"])
      // Upstream's documentation tab (v1beta1), without the labels its own webhook refuses next to names.
      const docs = readFileSync(join(root, "test/upstream/docs-examples/imagepulljob-v1beta1.yaml"), "utf8")
        .replace(/\n {4}matchLabels:\n {6}node-type: xxx/, "")
        .replace("name: job-with-always", "name: docs-v1beta1")
      writeFileSync(join(dir, "docs-v1beta1.yaml"), docs)
      await kubectl(["apply", "-f", join(dir, "docs-v1beta1.yaml")])
      await kubectl(["wait", "ipj/docs-v1beta1", "--for=condition=Complete", "--timeout=90s"])
      expect(parse(await kubectl(["get", "imagepulljobs.v1alpha1.apps.kruise.io", "docs-v1beta1", "-o", "yaml"])).status).toMatchObject({
        desired: 2,
        succeeded: 2
      })
      const always = parse(await kubectl(["get", "ipj", "job-with-always", "-o", "yaml"]))
      expect(always.status).toMatchObject({ desired: 5, succeeded: 5, failed: 0 })
      // Found by the version kubectl resolves ImagePullJob to (issue 26).
      const reasons = await kubectl(["events", "--for", "ipj/job-with-always", "-o", "jsonpath={.items[*].reason}"])
      expect(reasons.split(" ")).toContain("Completed")
      await eventually(
        "the Never example on every node",
        async () => {
          const never = parse(await kubectl(["get", "ipj", "job-with-never", "-o", "yaml"]))
          return never.status?.succeeded === never.status?.desired && never.status?.desired > 0 ? never : undefined
        },
        90_000
      )
    })
  })
})
