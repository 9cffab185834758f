import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { admit } from "../../harness/apiserver/admission/admission.ts"
import type { AdmissionOptions } from "../../harness/apiserver/admission/admission.ts"
import { findKind } from "../../harness/apiserver/catalog.ts"
import type { ServedKind } from "../../harness/apiserver/catalog.ts"
import { decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../src/api/decode.ts"
import { parseImageReference, toNodeImageTask } from "../../src/api/imageReference.ts"
import { effectiveImagePullPolicy } from "../../src/api/pullPolicySpelling.ts"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import { decideImageListPullJob } from "../../src/controller/imageListPullJob/decide.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import { nodeImageSpecs } from "../../src/daemon/nodeImageSpec.ts"
import { makeNodeImage } from "../support/fixtures.ts"
import { fromSchema } from "../support/schemaArbitrary.ts"

// Issue 24: whatever admission accepts, the controller and the daemon read, and the writes the
// controller derives from it are accepted in turn. Objects are generated from the CRDs' own
// schemas, numbers drawn mostly from the boundaries of int32, int64 and JavaScript's safe integers.

const kind = (plural: string, version = "v1beta1"): ServedKind => findKind("apps.kruise.io", version, plural)!
const imagePullJobs = kind("imagepulljobs")
const imageListPullJobs = kind("imagelistpulljobs")
const nodeImages = kind("nodeimages")

/** A spec of the kind; one of a job's two exclusive selectors dropped, so that more are admitted. */
const specOf = (served: ServedKind) =>
  fromSchema(served.structural!.properties!["spec"]!, "spec").map((spec) => {
    const { podSelector, ...rest } = spec as Record<string, unknown>
    return rest["selector"] === undefined && podSelector !== undefined ? { ...rest, podSelector } : rest
  })

const create: AdmissionOptions = { fieldValidation: "Strict", operation: "create", subresource: "main", decoderAdmission: false }
const statusUpdate: AdmissionOptions = { ...create, operation: "update", subresource: "status" }

const admitted = (served: ServedKind, object: unknown, options = create) => {
  const result = admit(served, object, options)
  return Result.isSuccess(result) ? result.success.object : undefined
}

/** Admission's answer, for the assertion messages. */
const refusal = (served: ServedKind, object: unknown, options = create): string => {
  const result = admit(served, object, options)
  return Result.isFailure(result) ? result.failure.message : "admitted"
}

const decodedOrThrow = <A>(result: Result.Result<A, { readonly message: string }>): A => {
  if (Result.isFailure(result)) throw new Error(`admitted but the controller cannot read it: ${result.failure.message}`)
  return result.success
}

/** The daemon reads every tag of an admitted NodeImage. */
const expectDaemonReads = (object: Record<string, unknown>) => {
  const view = Result.getOrThrow(nodeImageSpecs()(object as never))
  expect([...view.unreadable.values(), ...view.problems]).toEqual([])
}

const now = Date.parse("2026-12-02T10:00:00Z")
const uid = "3c1b9d0e-0000-4000-8000-000000000001"

/** What the controller writes for an admitted ImagePullJob on a node: the node's tag and the job's status. */
const expectJobWritesAdmitted = (object: Record<string, unknown>) => {
  const job: ImagePullJob = decodedOrThrow(decodeImagePullJob(object))
  const { name, tag } = toNodeImageTask(Result.getOrThrow(parseImageReference(job.spec.image)))
  const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "j", namespace: "default", uid }
  const task = { image: name, tag, owner, imagePullPolicy: effectiveImagePullPolicy(job.spec), pullSecrets: [] }
  const decision = decideImagePullJob({ job, task, targets: [makeNodeImage("n1")], stale: [], now, propagateEdits: true })
  for (const write of decision.writes) {
    if (write.entry === undefined) continue
    const nodeImage = {
      apiVersion: "apps.kruise.io/v1beta1",
      kind: "NodeImage",
      metadata: { name: "n1" },
      spec: { images: { [name]: write.entry } }
    }
    const stored = admitted(nodeImages, nodeImage)
    expect(stored, refusal(nodeImages, nodeImage)).toBeDefined()
    expectDaemonReads(stored!)
  }
  const withStatus = { ...object, status: decision.status }
  const served = kind("imagepulljobs", String(object["apiVersion"]).split("/")[1])
  expect(admitted(served, withStatus, { ...statusUpdate, old: object }), refusal(served, withStatus, statusUpdate)).toBeDefined()
}

const meta = { name: "j", namespace: "default", uid, generation: 1, creationTimestamp: "2026-12-02T09:00:00Z" }
const runs = { numRuns: 300 }

describe("what admission accepts, the controller and the daemon read, and their writes are accepted (issue 24)", () => {
  it("ImagePullJob", () => {
    let accepted = 0
    fc.assert(
      fc.property(specOf(imagePullJobs), (spec) => {
        const object = admitted(imagePullJobs, { apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", metadata: meta, spec })
        if (object === undefined) return
        accepted++
        expectJobWritesAdmitted(object)
      }),
      runs
    )
    expect(accepted).toBeGreaterThan(30)
  })

  it("ImageListPullJob, and the ImagePullJobs it creates", () => {
    let accepted = 0
    fc.assert(
      fc.property(specOf(imageListPullJobs), (spec) => {
        const object = admitted(imageListPullJobs, { apiVersion: "apps.kruise.io/v1beta1", kind: "ImageListPullJob", metadata: meta, spec })
        if (object === undefined) return
        accepted++
        const job = decodedOrThrow(decodeImageListPullJob(object))
        for (const child of decideImageListPullJob(job, [], now).create) {
          const served = kind("imagepulljobs", String(child.apiVersion).split("/")[1])
          const stored = admitted(served, child)
          expect(stored, refusal(served, child)).toBeDefined()
          expectJobWritesAdmitted({ ...stored!, metadata: { ...stored!.metadata!, uid, generation: 1 } })
        }
      }),
      runs
    )
    expect(accepted).toBeGreaterThan(30)
  })

  it("NodeImage", () => {
    let accepted = 0
    fc.assert(
      fc.property(specOf(nodeImages), (spec) => {
        const object = admitted(nodeImages, { apiVersion: "apps.kruise.io/v1beta1", kind: "NodeImage", metadata: { name: "n1" }, spec })
        if (object === undefined) return
        accepted++
        decodedOrThrow(decodeNodeImage(object))
        expectDaemonReads(object)
      }),
      runs
    )
    expect(accepted).toBeGreaterThan(30)
  })

  // The boundaries themselves, whatever the generator draws.
  it.each([
    [{ timeoutSeconds: 2 ** 31 - 1, backoffLimit: 2 ** 31 - 1 }, true],
    [{ timeoutSeconds: 2 ** 31 }, false],
    [{ backoffLimit: 2 ** 53 }, false],
    [{ timeoutSeconds: 1e300 }, false]
  ])("an ImagePullJob's pullPolicy %j is admitted: %s", (pullPolicy, expected) => {
    const object = { apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", metadata: meta, spec: { image: "nginx", pullPolicy } }
    expect(admitted(imagePullJobs, object) !== undefined, refusal(imagePullJobs, object)).toBe(expected)
    if (expected) expectJobWritesAdmitted(admitted(imagePullJobs, object)!)
  })
})
