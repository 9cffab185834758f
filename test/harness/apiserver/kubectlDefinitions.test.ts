// The embedded server's CustomResourceDefinitions with kubectl, as the README's and the migration
// guide's install steps use them: served as installed, applied unchanged, refused when changed.
// Skips (visibly) where /usr/bin/kubectl is missing; CI has it.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { crds } from "../../../src/api/crd/manifests.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"
import { startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

if (!hasKubectl) console.warn(`SKIPPED: the kubectl tests need ${kubectlPath}, which is not installed here`)

const title = hasKubectl ? "CustomResourceDefinitions with kubectl" : `CustomResourceDefinitions with kubectl (SKIPPED: no ${kubectlPath})`

const deployCrds = join(import.meta.dirname, "../../../deploy/crds")
const names = ["advancedcronjobs", "imagelistpulljobs", "imagepulljobs", "nodeimages"].map((plural) => `${plural}.apps.kruise.io`)
const lines = (verb: string) => names.map((name) => `customresourcedefinition.apiextensions.k8s.io/${name} ${verb}`).join("\n")

let server: RunningServer
beforeAll(async () => {
  if (hasKubectl) server = await startServer()
})
afterAll(async () => {
  if (hasKubectl) await server.close()
})

/** deploy/crds/'s NodeImage definition with one bound changed, as a file of the test's own. */
const changedDefinition = (kubectl: Kubectl): string => {
  const file = join(kubectl.directory, "nodeimages.yaml")
  writeFileSync(
    file,
    readFileSync(join(deployCrds, "apps.kruise.io_nodeimages.yaml"), "utf8").replaceAll("maxLength: 135", "maxLength: 100")
  )
  return file
}
const changedField =
  "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.images.additionalProperties.properties.tags.items.properties.tag.maxLength"
const unchangeable =
  `The CustomResourceDefinition "nodeimages.apps.kruise.io" is invalid: ${changedField}: Forbidden: this API server serves the ` +
  "definitions preheat was built with (`preheat crds`, deploy/crds/) and cannot change them while it runs\n"

describe.skipIf(!hasKubectl)(title, () => {
  it("are discovered, listed and read as a cluster that installed them holds them", async () => {
    const kubectl = kubectlFor(server)
    const resources = await kubectl(["api-resources", "--api-group", "apiextensions.k8s.io"])
    expect(resources.stdout.split("\n")[1]?.split(/\s+/)).toEqual([
      "customresourcedefinitions",
      "crd,crds",
      "apiextensions.k8s.io/v1",
      "false",
      "CustomResourceDefinition"
    ])
    const list = await kubectl(["get", "crd"])
    expect(list.stderr).toBe("")
    expect(list.stdout.split("\n")[0]?.split(/\s{2,}/)).toEqual(["NAME", "CREATED AT"])
    expect(
      list.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(/\s+/)[0])
    ).toEqual(names)
    const read = parse((await kubectl(["get", "crd", "imagepulljobs.apps.kruise.io", "-o", "yaml"])).stdout)
    const generated = crds().find((crd) => crd.metadata.name === "imagepulljobs.apps.kruise.io")
    expect(read.spec).toEqual(generated?.spec)
    expect(read.metadata.labels).toEqual(generated?.metadata.labels)
    expect(read.status.storedVersions).toEqual(["v1beta1"])
    expect(read.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status])).toEqual([
      ["NamesAccepted", "True"],
      ["Established", "True"]
    ])
    // The migration guide's checks.
    const strategy = await kubectl(["get", "crd", "imagepulljobs.apps.kruise.io", "-o", "jsonpath={.spec.conversion.strategy}"])
    expect(strategy.stdout).toBe("None")
  })

  it("take kubectl apply, apply --server-side, replace and annotate of the same definitions", async () => {
    const kubectl = kubectlFor(server)
    const applied = await kubectl(["apply", "-f", deployCrds])
    expect(applied.code).toBe(0)
    expect(applied.stdout.trim()).toBe(lines("configured"))
    // Served as if created by hand: kubectl says once that its annotation was missing, as on a cluster.
    expect(applied.stderr).toContain("is missing the kubectl.kubernetes.io/last-applied-configuration annotation")
    expect(await kubectl(["apply", "-f", deployCrds])).toMatchObject({ code: 0, stdout: `${lines("unchanged")}\n`, stderr: "" })
    expect(await kubectl(["apply", "--server-side", "-f", deployCrds])).toMatchObject({
      code: 0,
      stdout: `${lines("serverside-applied")}\n`,
      stderr: ""
    })
    expect(await kubectl(["replace", "-f", deployCrds])).toMatchObject({ code: 0, stdout: `${lines("replaced")}\n`, stderr: "" })
    const annotated = await kubectl(["annotate", "crd", "nodeimages.apps.kruise.io", "helm.sh/resource-policy=keep", "--overwrite"])
    expect(annotated).toMatchObject({
      code: 0,
      stdout: "customresourcedefinition.apiextensions.k8s.io/nodeimages.apps.kruise.io annotated\n"
    })
  })

  it("refuse a changed definition, a new one and a deletion, saying why", async () => {
    const kubectl = kubectlFor(server)
    const file = changedDefinition(kubectl)
    const applied = await kubectl(["apply", "-f", file])
    expect(applied.code).toBe(1)
    expect(applied.stderr.endsWith(unchangeable)).toBe(true)
    expect(await kubectl(["apply", "--server-side", "-f", file])).toMatchObject({ code: 1, stderr: unchangeable })
    expect(await kubectl(["replace", "-f", file])).toMatchObject({ code: 1, stderr: unchangeable })
    const read = parse((await kubectl(["get", "crd", "nodeimages.apps.kruise.io", "-o", "yaml"])).stdout)
    expect(read.spec).toEqual(crds().find((crd) => crd.metadata.name === "nodeimages.apps.kruise.io")?.spec)

    const other = join(kubectl.directory, "foos.yaml")
    writeFileSync(
      other,
      `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names: { kind: Foo, plural: foos }
  scope: Namespaced
  versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }]
`
    )
    expect(await kubectl(["apply", "-f", other])).toMatchObject({
      code: 1,
      stderr:
        'Error from server (Forbidden): error when creating "' +
        other +
        '": customresourcedefinitions.apiextensions.k8s.io "foos.example.com" is forbidden: this API server serves its own ' +
        `CustomResourceDefinitions only (${crds()
          .map((crd) => crd.metadata.name)
          .join(", ")}) and cannot add one while it runs\n`
    })
    expect(await kubectl(["delete", "crd", "nodeimages.apps.kruise.io"])).toMatchObject({
      code: 1,
      stderr:
        'Error from server (Forbidden): customresourcedefinitions.apiextensions.k8s.io "nodeimages.apps.kruise.io" is forbidden: ' +
        "this API server cannot remove a CustomResourceDefinition it serves while it runs\n"
    })
    expect((await kubectl(["get", "crd", "-o", "name"])).stdout.trim().split("\n")).toHaveLength(4)
  })
})
