// A Node's status.images read as the kubelet writes it (issue 39): names normalised as
// sameImage compares them, an image listed by its tag or by its repository and manifest digest.
import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseImageReference, sameImage } from "../../src/api/imageReference.ts"
import { imageKey, reportedImages } from "../../src/api/nodeStatusImages.ts"

const digest = `sha256:${"a".repeat(64)}`
const other = `sha256:${"b".repeat(64)}`

/** A Node as the kubelet reports it: repo digests, then repo tags, per image. */
const node = (...images: ReadonlyArray<ReadonlyArray<string>>) => ({
  metadata: { name: "n1" },
  status: { images: images.map((names, i) => ({ names, sizeBytes: 1000 - i })) }
})

describe("imageKey", () => {
  const references = [
    "nginx",
    "nginx:latest",
    "docker.io/library/nginx:latest",
    "index.docker.io/library/nginx",
    "nginx:1.25",
    `nginx@${digest}`,
    `nginx:1.25@${digest}`,
    `docker.io/library/nginx@${digest}`,
    `nginx@${other}`,
    "library/nginx:1.25",
    "team/nginx:1.25",
    "ghcr.io/team/nginx:1.25",
    `ghcr.io/team/nginx@${digest}`,
    "localhost:5000/nginx:1.25"
  ].map((r) => Result.getOrThrow(parseImageReference(r)))

  it("is equal for two references exactly when sameImage says they name the same image", () => {
    fc.assert(
      fc.property(fc.constantFrom(...references), fc.constantFrom(...references), (a, b) => {
        expect(imageKey(a) === imageKey(b)).toBe(sameImage(a, b))
      }),
      { numRuns: 400 }
    )
  })
})

describe("reportedImages", () => {
  it("a tag is listed by the runtime's full name of it, latest when none", () => {
    const reported = reportedImages(
      node([`docker.io/library/nginx@${digest}`, "docker.io/library/nginx:1.25"], ["docker.io/library/redis:latest"])
    )
    expect(reported.count).toBe(2)
    expect(reported.lists("nginx", "1.25")).toBe(true)
    expect(reported.lists("docker.io/library/nginx", "1.25")).toBe(true)
    expect(reported.lists("nginx", "1.26")).toBe(false)
    expect(reported.lists("redis", "latest")).toBe(true)
    expect(reported.lists("team/redis", "latest")).toBe(false)
  })

  it("a digest tag by the repository's repo digest; a tag also by the digest its pull resolved to", () => {
    // The kubelet names an image by its digests first and five names at most: a tag can fall off.
    const cut = node([`ghcr.io/team/app@${digest}`, "ghcr.io/team/app:a", "ghcr.io/team/app:b", "ghcr.io/team/app:c", "ghcr.io/team/app:d"])
    const reported = reportedImages(cut)
    expect(reported.lists("ghcr.io/team/app", digest)).toBe(true)
    expect(reported.lists("ghcr.io/team/app", other)).toBe(false)
    expect(reported.lists("ghcr.io/team/app", "e")).toBe(false)
    expect(reported.lists("ghcr.io/team/app", "e", digest)).toBe(true)
    expect(reported.lists("ghcr.io/team/app", "e", other)).toBe(false)
    // The digest names the content of that repository only.
    expect(reported.lists("ghcr.io/team/other", "e", digest)).toBe(false)
  })

  it("a node without a status, or with names that do not parse, lists nothing of them", () => {
    expect(reportedImages(undefined).count).toBe(0)
    expect(reportedImages({ metadata: {} }).lists("nginx", "1")).toBe(false)
    const odd = reportedImages(node(["sha256:not-a-name", "Nginx:1"]))
    expect(odd.count).toBe(1)
    expect(odd.lists("nginx", "1")).toBe(false)
  })
})
