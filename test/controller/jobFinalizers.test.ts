// The finalizers of an ImagePullJob that OpenKruise's controller held before a migration (issue 26
// item 5): upstream's deletion-protection is taken over, or a job running at the switch could never go.
import { describe, expect, it } from "vitest"
import { heldFinalizers, releasedFinalizers } from "../../src/controller/imagePullJob/finalizers.ts"

const preheat = "preheat.kruise.io/release-tags"
const upstream = "apps.kruise.io/deletion-protection"

describe("ImagePullJob finalizers", () => {
  it("a live job gets preheat's in place of upstream's, others kept", () => {
    expect(heldFinalizers([])).toEqual([preheat])
    expect(heldFinalizers([upstream])).toEqual([preheat])
    expect(heldFinalizers(["example.com/keep", upstream, preheat])).toEqual(["example.com/keep", preheat])
    expect(heldFinalizers(["example.com/keep", preheat])).toBeUndefined()
  })

  it("a going job loses both, so one OpenKruise protected is not stuck", () => {
    expect(releasedFinalizers([upstream])).toEqual([])
    expect(releasedFinalizers([upstream, "example.com/keep", preheat])).toEqual(["example.com/keep"])
    expect(releasedFinalizers(["example.com/keep"])).toBeUndefined()
  })
})
