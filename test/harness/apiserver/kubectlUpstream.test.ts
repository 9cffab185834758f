// Upstream's API as a user of OpenKruise meets it (issue 11), with kubectl against the embedded API
// server: both versions, upstream's documentation examples, and the webhook rules refused at apply
// time in upstream's words. Skips (visibly) where /usr/bin/kubectl is missing; CI has it.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"
import { startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

if (!hasKubectl) console.warn(`SKIPPED: the kubectl tests need ${kubectlPath}, which is not installed here`)

const title = hasKubectl ? "kubectl and upstream's API" : `kubectl and upstream's API (SKIPPED: no ${kubectlPath})`

let server: RunningServer
beforeAll(async () => {
  if (hasKubectl) server = await startServer()
})
afterAll(async () => {
  if (hasKubectl) await server.close()
})

const upstreamExample = (name: string): string => readFileSync(join(import.meta.dirname, "../../upstream/docs-examples", name), "utf8")

const namespace = async (kubectl: Kubectl): Promise<string> => {
  const name = unique("upstream")
  expect((await kubectl(["create", "namespace", name])).stderr).toBe("")
  return name
}

const apply = async (kubectl: Kubectl, ns: string | undefined, text: string) => {
  const file = join(kubectl.directory, `${unique("manifest")}.yaml`)
  writeFileSync(file, text)
  return kubectl(["apply", ...(ns === undefined ? [] : ["-n", ns]), "-f", file])
}

const job = (name: string, spec: string, version = "v1beta1") => `apiVersion: apps.kruise.io/${version}
kind: ImagePullJob
metadata:
  name: ${name}
spec:
${spec}`

const listJob = (name: string, spec: string) => `apiVersion: apps.kruise.io/v1beta1
kind: ImageListPullJob
metadata:
  name: ${name}
spec:
${spec}`

// Upstream's examples select by names and by labels at once, which upstream's own webhook refuses;
// without the labels they are what a user applies.
const withoutLabels = (text: string): string => text.replace(/\n {4}matchLabels:\n {6}node-type: xxx/, "")

describe.skipIf(!hasKubectl)(title, () => {
  it("the documentation's v1beta1 ImagePullJob: refused in upstream's words as written, created without the labels", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const example = upstreamExample("imagepulljob-v1beta1.yaml")
    const refused = await apply(kubectl, ns, example)
    expect(refused.stderr).toBe(
      `The ImagePullJob "job-with-always" is invalid: spec.selector: Invalid value: "object": can not set both names and labelSelector in this spec.selector\n`
    )
    expect(await apply(kubectl, ns, withoutLabels(example))).toMatchObject({
      code: 0,
      stdout: "imagepulljob.apps.kruise.io/job-with-always created\n"
    })
    const list = await apply(kubectl, ns, withoutLabels(upstreamExample("imagelistpulljob-v1alpha1.yaml")))
    expect(list.stdout).toBe("imagelistpulljob.apps.kruise.io/job-with-always created\n")
  })

  it("an object written as either version reads as both, apiVersion rewritten; v1beta1 is preferred", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    await apply(kubectl, ns, job("beta", "  image: nginx:1.9.1\n"))
    await apply(kubectl, ns, job("alpha", "  image: nginx:1.9.1\n", "v1alpha1"))
    for (const name of ["alpha", "beta"]) {
      const read = async (resource: string) =>
        parse((await kubectl(["get", "-n", ns, resource, name, "-o", "yaml"])).stdout) as Record<string, any>
      const preferred = await read("ipj")
      const alpha = await read("imagepulljobs.v1alpha1.apps.kruise.io")
      const beta = await read("imagepulljobs.v1beta1.apps.kruise.io")
      expect(preferred.apiVersion).toBe("apps.kruise.io/v1beta1")
      expect(alpha.apiVersion).toBe("apps.kruise.io/v1alpha1")
      expect(beta.apiVersion).toBe("apps.kruise.io/v1beta1")
      expect({ ...alpha, apiVersion: "" }).toEqual({ ...beta, apiVersion: "" })
    }
    const table = await kubectl(["get", "-n", ns, "imagepulljobs.v1alpha1.apps.kruise.io", "-o", "name"])
    expect(table.stdout).toBe("imagepulljob.apps.kruise.io/alpha\nimagepulljob.apps.kruise.io/beta\n")
  })

  // Issue 26: upstream serves AdvancedCronJob in both versions (storage v1beta1); preheat keeps the
  // ImageListPullJob template in both, so kubectl of either version reads and writes it whole.
  it("AdvancedCronJob: applied as either version, got as acj and as each version, the template in every read", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const cronJob = (name: string, version: string) => `apiVersion: apps.kruise.io/${version}
kind: AdvancedCronJob
metadata:
  name: ${name}
spec:
  schedule: "0 2 * * *"
  template:
    imageListPullJobTemplate:
      spec:
        images:
        - nginx:1.25.3
        completionPolicy:
          type: Always
`
    expect((await apply(kubectl, ns, cronJob("alpha", "v1alpha1"))).stdout).toBe("advancedcronjob.apps.kruise.io/alpha created\n")
    expect((await apply(kubectl, ns, cronJob("beta", "v1beta1"))).stdout).toBe("advancedcronjob.apps.kruise.io/beta created\n")
    for (const name of ["alpha", "beta"]) {
      const read = async (resource: string) =>
        parse((await kubectl(["get", "-n", ns, resource, name, "-o", "yaml"])).stdout) as Record<string, any>
      const preferred = await read("acj")
      const alpha = await read("advancedcronjobs.v1alpha1.apps.kruise.io")
      const beta = await read("advancedcronjobs.v1beta1.apps.kruise.io")
      expect([preferred.apiVersion, alpha.apiVersion, beta.apiVersion]).toEqual([
        "apps.kruise.io/v1beta1",
        "apps.kruise.io/v1alpha1",
        "apps.kruise.io/v1beta1"
      ])
      expect({ ...alpha, apiVersion: "" }).toEqual({ ...beta, apiVersion: "" })
      expect(alpha.spec.template.imageListPullJobTemplate.spec.images).toEqual(["nginx:1.25.3"])
    }
    // Re-applied through v1alpha1 with a change: the template stays in storage.
    expect((await apply(kubectl, ns, cronJob("beta", "v1alpha1").replace('"0 2 * * *"', '"0 3 * * *"'))).stdout).toBe(
      "advancedcronjob.apps.kruise.io/beta configured\n"
    )
    const table = await kubectl(["get", "-n", ns, "advancedcronjobs.v1alpha1.apps.kruise.io", "beta"])
    expect(table.stdout).toMatch(/^NAME +SCHEDULE +TYPE +LASTSCHEDULETIME +AGE\nbeta +0 3 \* \* \* +/)
    const stored = parse((await kubectl(["get", "-n", ns, "acj", "beta", "-o", "yaml"])).stdout) as Record<string, any>
    expect(stored.spec.template.imageListPullJobTemplate.spec.images).toEqual(["nginx:1.25.3"])
  })

  it("the documentation's NodeImage and its kubectl patch", async () => {
    const kubectl = kubectlFor(server)
    const name = unique("node-xxx")
    const example = upstreamExample("nodeimage-empty.yaml").replace("name: node-xxx", `name: ${name}`)
    expect((await apply(kubectl, undefined, example)).stdout).toBe(`nodeimage.apps.kruise.io/${name} created\n`)
    const patch = upstreamExample("nodeimage-patch.sh").replace("node-xxx", name).trim()
    const args = [...patch.matchAll(/'[^']*'|\S+/g)].map(([word]) => word.replace(/^'|'$/g, "")).slice(1)
    expect(await kubectl(args)).toMatchObject({ code: 0, stdout: `nodeimage.apps.kruise.io/${name} patched\n` })
  })

  it.each([
    [
      "an upper-case image",
      job("bad", "  image: Nginx:1\n"),
      `The ImagePullJob "bad" is invalid: spec.image: Invalid value: "string": invalid image "Nginx:1": repository name must be lowercase`
    ],
    [
      "an empty image",
      job("bad", "  image: ''\n"),
      `The ImagePullJob "bad" is invalid: spec.image: Invalid value: "string": image can not be empty`
    ],
    [
      "a list job's bad image",
      listJob("bad", "  images:\n  - nginx\n  - '...'\n"),
      `The ImageListPullJob "bad" is invalid: spec.images[1]: Invalid value: "string": invalid image "...": invalid reference format`
    ],
    [
      "In without values",
      job("bad", "  image: nginx\n  selector:\n    matchExpressions:\n    - key: zone\n      operator: In\n"),
      'The ImagePullJob "bad" is invalid: spec.selector: Invalid value: "object": invalid selector: matchExpressions[0].values: ' +
        "Required value: must be specified when `operator` is 'In' or 'NotIn'"
    ],
    [
      "a deadline below the timeout",
      job("bad", "  image: nginx\n  completionPolicy:\n    activeDeadlineSeconds: 49\n  pullPolicy:\n    timeoutSeconds: 50\n"),
      `The ImagePullJob "bad" is invalid: spec: Invalid value: "object": completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)`
    ],
    // Not in upstream's ImageListPullJob webhook (SPEC §1 lists it for both kinds): every
    // ImagePullJob the list job created would be refused (issue 24).
    [
      "a list job's deadline below the default timeout",
      listJob("bad", "  images:\n  - nginx\n  completionPolicy:\n    activeDeadlineSeconds: 10\n"),
      `The ImageListPullJob "bad" is invalid: spec: Invalid value: "object": completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)`
    ],
    [
      "a timeout beyond int32",
      job("bad", "  image: nginx\n  pullPolicy:\n    timeoutSeconds: 2147483648\n"),
      `The ImagePullJob "bad" is invalid: spec.pullPolicy.timeoutSeconds: Invalid value: 2147483648: spec.pullPolicy.timeoutSeconds in body should be less than or equal to 2147483647`
    ],
    // Issue 26: not upstream's (its CRD has no pullPolicy.type); the seed's spelling may not contradict its own.
    [
      "the deprecated pullPolicy.type contradicting imagePullPolicy",
      job("bad", "  image: nginx\n  imagePullPolicy: IfNotPresent\n  pullPolicy:\n    type: Always\n", "v1alpha1"),
      `The ImagePullJob "bad" is invalid: spec.pullPolicy.type: Invalid value: "object": pullPolicy.type Always differs from imagePullPolicy IfNotPresent: pullPolicy.type is deprecated, set imagePullPolicy only`
    ]
  ])("apply refuses %s at once, in upstream's words", async (_, manifest, message) => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const refused = await apply(kubectl, ns, manifest)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(`${message}\n`)
  })

  it.each([
    [
      "a deadline equal to the timeout (upstream's e2e jobs use 50/50)",
      job("ok", "  image: nginx\n  completionPolicy:\n    activeDeadlineSeconds: 50\n  pullPolicy:\n    timeoutSeconds: 50\n")
    ],
    [
      "a job at the int32 maxima of timeout and retries",
      job("ok", "  image: nginx\n  pullPolicy:\n    timeoutSeconds: 2147483647\n    backoffLimit: 2147483647\n")
    ],
    ["parallelism as a numeric string, as Helm's quote writes it", job("ok", '  image: nginx\n  parallelism: "4"\n')]
  ])("apply accepts %s", async (_, manifest) => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const accepted = await apply(kubectl, ns, manifest)
    expect(accepted).toMatchObject({ code: 0, stderr: "" })
    expect(accepted.stdout).toMatch(/created\n$/)
  })

  it("NodeImage: every ObjectReference field in ownerReferences, pull secrets without namespace or name, mode in v1beta1", async () => {
    const kubectl = kubectlFor(server)
    const name = unique("node")
    const nodeImage = (version: string) => `apiVersion: apps.kruise.io/${version}
kind: NodeImage
metadata:
  name: ${name}
spec:
  images:
    nginx:
      pullSecrets:
      - name: only-a-name
      - namespace: only-a-namespace
        mode: batch
      tags:
      - tag: "1.9.1"
        ownerReferences:
        - apiVersion: apps.kruise.io/v1beta1
          kind: ImagePullJob
          name: job
          namespace: default
          uid: 1b4d4f2e-0000-4000-8000-000000000000
          resourceVersion: "42"
          fieldPath: spec.image
`
    // Strict field validation (kubectl's default) names the field a version lacks.
    const alpha = await apply(kubectl, undefined, nodeImage("v1alpha1"))
    expect(alpha.stderr).toContain(`unknown field "spec.images[nginx].pullSecrets[1].mode"`)
    expect(await apply(kubectl, undefined, nodeImage("v1beta1"))).toMatchObject({
      code: 0,
      stdout: `nodeimage.apps.kruise.io/${name} created\n`
    })
    const stored = parse((await kubectl(["get", "ni", name, "-o", "yaml"])).stdout) as Record<string, any>
    expect(stored.spec.images.nginx.pullSecrets).toEqual([{ name: "only-a-name" }, { namespace: "only-a-namespace", mode: "batch" }])
    expect(stored.spec.images.nginx.tags[0].ownerReferences[0]).toMatchObject({ resourceVersion: "42", fieldPath: "spec.image" })
  })
})
