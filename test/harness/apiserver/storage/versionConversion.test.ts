// Conversion between apps.kruise.io v1alpha1 and v1beta1 loses nothing (issue 26): an object
// stored as one version, read through the other (storage/servedVersion.ts) and written back
// through it (admission: pruning, defaults, validation) is the object it was. The kinds convert
// with None, as upstream's CRDs; NodeImage alone loses a field on the way, as upstream's does
// (pullSecrets[].mode, v1beta1 only; test/harness/apiserver/versions.test.ts).
import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { admit } from "../../../../harness/apiserver/admission/admission.ts"
import { findKind } from "../../../../harness/apiserver/catalog.ts"
import type { ServedKind } from "../../../../harness/apiserver/catalog.ts"
import { servedViews } from "../../../../harness/apiserver/storage/servedVersion.ts"
import type { KubeObject } from "../../../../src/kube/KubeApi.ts"
import { fromSchema } from "../../../support/schemaArbitrary.ts"

const group = "apps.kruise.io"
const served = (plural: string, version: string): ServedKind => findKind(group, version, plural)!

const meta = { name: "x", namespace: "default", uid: "3c1b9d0e-0000-4000-8000-000000000001", generation: 1, resourceVersion: "7" }

/** An object as the store holds it after a write through `kind`: stored with the storage version's apiVersion. */
const written = (kind: ServedKind, object: unknown, old?: KubeObject): KubeObject | string => {
  const result = admit(kind, object, {
    fieldValidation: "Strict",
    operation: old === undefined ? "create" : "update",
    subresource: "main",
    decoderAdmission: false,
    old
  })
  return Result.isFailure(result) ? result.failure.message : ({ ...result.success.object, apiVersion: `${group}/v1beta1` } as KubeObject)
}

/** Spec and status drawn from the schema of the version written first. */
const objects = (kind: ServedKind) =>
  fc.record({
    spec: fromSchema(kind.structural!.properties!["spec"]!, "spec"),
    status: fc.option(fromSchema(kind.structural!.properties!["status"]!, "status"), { nil: undefined })
  })

const roundTrips: ReadonlyArray<[string, string, string]> = [
  ["advancedcronjobs", "v1beta1", "v1alpha1"],
  ["advancedcronjobs", "v1alpha1", "v1beta1"],
  ["imagepulljobs", "v1beta1", "v1alpha1"],
  ["imagelistpulljobs", "v1beta1", "v1alpha1"]
]

describe("apps.kruise.io conversion v1alpha1 <-> v1beta1", () => {
  it.each(roundTrips)("%s written as %s, read and written back as %s: unchanged", (plural, first, other) => {
    const source = served(plural, first)
    const target = served(plural, other)
    const view = servedViews()
    let admitted = 0
    fc.assert(
      fc.property(objects(source), ({ spec, status }) => {
        const body = { apiVersion: `${group}/${first}`, kind: source.resource.kind, metadata: meta, spec, ...(status ? { status } : {}) }
        const stored = written(source, body)
        if (typeof stored === "string") return
        admitted++
        const read = view(target.resource, stored)
        expect(read.apiVersion).toBe(`${group}/${other}`)
        expect(written(target, read, stored)).toEqual(stored)
      }),
      { numRuns: 200 }
    )
    // The generator must reach past validation often enough for the property to mean something.
    expect(admitted).toBeGreaterThan(20)
  })
})
