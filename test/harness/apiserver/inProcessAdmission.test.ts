// The embedded server's in-process KubeApi (what `preheat dev`'s controller, daemons and workload
// stand-ins write through) admits as its HTTP front does: what kubectl is refused, they are
// refused, with the same causes, as the live client reads them from the Status.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { patchNodeImages } from "../../../src/controller/writes.ts"
import type { ImageSpec } from "../../../src/api/nodeImage.ts"
import type { KubeError } from "../../../src/kube/errors.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { customResourceDefinitions } from "../../../harness/apiserver/kindRules.ts"
import { hasKubectl, kubectlFor } from "./kubectlClient.ts"
import { imagePullJob, namespace, request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server.close()
})

const run = <A>(effect: Effect.Effect<A, KubeError>) => Effect.runPromise(effect)
const refusal = <A>(effect: Effect.Effect<A, KubeError>) => Effect.runPromise(Effect.flip(effect))

const nodeImage = (name: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name },
  spec: {}
})

const task: ImageSpec = { tags: [{ tag: "v1", version: 0, imagePullPolicy: "IfNotPresent" }] }
const images = (count: number): Record<string, ImageSpec> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`registry.example.com/app-${i}`, task]))

// upstream's rule, in the CRD's CEL (src/api/nodeImage.ts)
const tooMany = {
  field: "spec.images",
  message: 'Invalid value: "object": spec images length 257 can not be more than 256'
}

describe("the in-process KubeApi of the embedded server", () => {
  it("refuses a NodeImage of 257 images as the HTTP front refuses kubectl, with the same causes", async () => {
    await run(server.api.create(resources.nodeImage, nodeImage("full")))
    const patch = { spec: { images: images(257) } }

    const inProcess = await refusal(server.api.patch(resources.nodeImage, { name: "full" }, patch))
    expect(inProcess._tag).toBe("Invalid")
    expect(inProcess._tag === "Invalid" && inProcess.causes).toEqual([tooMany])
    expect(inProcess.message).toBe(`NodeImage full is invalid: ${tooMany.field}: ${tooMany.message}`)

    const overHttp = await request(server, "/apis/apps.kruise.io/v1alpha1/nodeimages/full", {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: patch
    })
    expect(overHttp.status).toBe(422)
    expect(overHttp.json.details.causes.map((c: { field: string; message: string }) => ({ field: c.field, message: c.message }))).toEqual([
      tooMany
    ])

    const created = await refusal(server.api.create(resources.nodeImage, { ...nodeImage("born-full"), spec: patch.spec }))
    expect(created._tag === "Invalid" && created.causes).toEqual([tooMany])
    // 256 is the most, and the refused writes changed nothing.
    await run(server.api.patch(resources.nodeImage, { name: "full" }, { spec: { images: images(256) } }))
    expect(Object.keys((await run(server.api.get(resources.nodeImage, { name: "full" })))["spec"] as object)).toEqual(["images"])
    expect((await refusal(server.api.get(resources.nodeImage, { name: "born-full" })))._tag).toBe("NotFound")
  })

  it.skipIf(!hasKubectl)("kubectl is refused the same write in the same words", async () => {
    await run(server.api.create(resources.nodeImage, nodeImage("by-hand")))
    const kubectl = kubectlFor(server)
    const file = join(kubectl.directory, "patch.json")
    writeFileSync(file, JSON.stringify({ spec: { images: images(257) } }))
    const refused = await kubectl(["patch", "nodeimage", "by-hand", "--type=merge", "--patch-file", file])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(`The NodeImage "by-hand" is invalid: ${tooMany.field}: ${tooMany.message}\n`)
  })

  it("refuses the controller's own NodeImage write past 256 images", async () => {
    const stored = await run(server.api.create(resources.nodeImage, { ...nodeImage("controller"), spec: { images: images(256) } }))
    const written: Array<KubeObject> = []
    const nodeImages = { get: () => stored, written: (object: KubeObject) => Effect.sync(() => void written.push(object)) }
    const changes = new Map([["registry.example.com/one-more", task]])
    const refused = await refusal(patchNodeImages(nodeImages, "controller", changes).pipe(Effect.provideService(KubeApi, server.api)))
    expect(refused._tag === "Invalid" && refused.causes).toEqual([tooMany])
    expect(written).toEqual([])
  })

  it("prunes, defaults and validates a custom resource as over HTTP", async () => {
    const ns = await namespace(server)
    const created = await run(
      server.api.create(resources.imagePullJob, { ...imagePullJob("j", { unknown: 1 }), metadata: { name: "j", namespace: ns } })
    )
    expect(created["spec"]).toEqual({
      image: "nginx:1.25",
      completionPolicy: { type: "Always" },
      parallelism: 1,
      pullPolicy: { backoffLimit: 3, timeoutSeconds: 600 }
    })
    const invalid = await refusal(
      server.api.patch(resources.imagePullJob, { name: "j", namespace: ns }, { spec: { completionPolicy: { type: "Sometimes" } } })
    )
    expect(invalid._tag === "Invalid" && invalid.causes).toEqual([
      { field: "spec.completionPolicy.type", message: 'Invalid value: "string": unknown type of completionPolicy: "Sometimes"' }
    ])
  })

  it("creates only into a namespace that exists and is not being deleted", async () => {
    const missing = await refusal(
      server.api.create(resources.imagePullJob, { ...imagePullJob("j"), metadata: { name: "j", namespace: "nowhere" } })
    )
    expect(missing._tag === "Invalid" && missing.causes).toEqual([
      { field: "metadata.namespace", message: 'namespaces "nowhere" not found' }
    ])
    const ns = await namespace(server)
    await run(
      server.api.create(resources.secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s", namespace: ns, finalizers: ["hold"] }
      })
    )
    await run(server.api.delete(resources.namespace, { name: ns }))
    const terminating = await refusal(
      server.api.create(resources.imagePullJob, { ...imagePullJob("j"), metadata: { name: "j", namespace: ns } })
    )
    expect(terminating._tag).toBe("Forbidden")
    expect(terminating.message).toContain(`unable to create new content in namespace ${ns} because it is being terminated`)
  })

  it("may not delete the initial namespaces nor a CustomResourceDefinition", async () => {
    expect((await refusal(server.api.delete(resources.namespace, { name: "default" })))._tag).toBe("Forbidden")
    const definition = await refusal(server.api.delete(customResourceDefinitions, { name: "nodeimages.apps.kruise.io" }))
    expect(definition._tag).toBe("Forbidden")
    expect(definition.message).toContain("cannot remove a CustomResourceDefinition it serves while it runs")
  })
})
