// Server-side apply of a job's selector through kubectl: the CRDs mark selectors
// `x-kubernetes-map-type: atomic` as upstream's do, so a second field manager's selector replaces
// the first's whole (after a conflict over `.spec.selector`, settled with --force-conflicts)
// instead of being merged label by label into a selector neither manager wrote.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"
import { ipjPath, namespace, request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

if (!hasKubectl) console.warn(`SKIPPED: the server-side apply kubectl tests need ${kubectlPath}, which is not installed here`)

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const job = (selector: string) => `apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata:
  name: web
spec:
  image: nginx:1.25
${selector}`

const file = (kubectl: Kubectl, name: string, text: string) => {
  const path = join(kubectl.directory, name)
  writeFileSync(path, text)
  return path
}

const managedSpec = (object: any, manager: string) =>
  object.metadata.managedFields.find((m: any) => m.manager === manager && m.operation === "Apply")?.fieldsV1["f:spec"]

describe.skipIf(!hasKubectl)("server-side apply of selectors", () => {
  it.each([
    [
      "selector",
      "  selector:\n    matchLabels:\n      zone: a\n",
      "  selector:\n    matchLabels:\n      pool: gpu\n    matchExpressions:\n    - {key: arch, operator: In, values: [arm64]}\n",
      { matchLabels: { pool: "gpu" }, matchExpressions: [{ key: "arch", operator: "In", values: ["arm64"] }] }
    ],
    [
      "podSelector",
      "  podSelector:\n    matchLabels:\n      app: web\n      tier: front\n",
      "  podSelector:\n    matchLabels:\n      app: api\n",
      { matchLabels: { app: "api" } }
    ]
  ])("a second manager's %s replaces the first's whole", async (field, first, second, expected) => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    const apply = (manager: string, path: string, ...flags: ReadonlyArray<string>) =>
      kubectl(["apply", "--server-side", `--field-manager=${manager}`, ...flags, "-n", ns, "-f", path])
    expect(await apply("team-a", file(kubectl, "a.yaml", job(first)))).toMatchObject({ code: 0 })
    const b = file(kubectl, "b.yaml", job(second))

    const refused = await apply("team-b", b)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(`Apply failed with 1 conflict: conflict with "team-a": .spec.${field}`)

    expect(await apply("team-b", b, "--force-conflicts")).toMatchObject({ code: 0 })
    const taken = (await request(server, ipjPath(ns, "web"))).json
    expect(taken.spec[field]).toEqual(expected)
    // The selector is one field: team-b owns it whole, team-a keeps only the image.
    expect(managedSpec(taken, "team-b")).toEqual({ "f:image": {}, [`f:${field}`]: {} })
    expect(managedSpec(taken, "team-a")).toEqual({ "f:image": {} })
  })
})
