import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { familiarName, formatImageReference, parseImageReference, toNodeImageTask } from "../../src/api/imageReference.ts"
import {
  allowlisted,
  allowlistEntry,
  allowlistPattern,
  type KubeletImageVerification,
  preloadedVerdict,
  repositoryName
} from "../../src/api/kubeletImageVerification.ts"

/**
 * The kubelet's own table, TestNewNeverVerifyAllowListedPullPolicy in
 * pkg/kubelet/images/pullmanager/image_pull_policies_test.go (kubernetes/kubernetes): each allowlist,
 * whether the kubelet refuses it, how many exact and wildcard entries it keeps (duplicates once, as
 * its set does), and whether `test.io/test/test-image:tag` then needs verification.
 */
const kubeletTable: ReadonlyArray<{
  readonly name: string
  readonly allowlist: ReadonlyArray<string>
  readonly wantErr?: true
  readonly absolutes?: number
  readonly wildcards?: number
  readonly verify?: boolean
}> = [
  {
    name: "not in allowlist",
    allowlist: ["test.io/test/image1", "test.io/test/image2", "test.io/test/image3"],
    absolutes: 3,
    verify: true
  },
  {
    name: "not in allowlist, a duplicate",
    allowlist: ["test.io/test/image1", "test.io/test/image3", "test.io/test/image2", "test.io/test/image3"],
    absolutes: 3,
    verify: true
  },
  {
    name: "appears in allowlist",
    allowlist: ["test.io/test/image1", "test.io/test/image2", "test.io/test/test-image", "test.io/test/image3"],
    absolutes: 4,
    verify: false
  },
  { name: "wildcard in the middle", allowlist: ["image.repo/pokus*/imagename"], wantErr: true },
  { name: "trailing non-segment wildcard", allowlist: ["image.repo/pokus*"], wantErr: true },
  { name: "wildcard path segment in the middle", allowlist: ["image.repo/*/imagename"], wantErr: true },
  { name: "only wildcard segment", allowlist: ["/*"], wantErr: true },
  { name: "ends with a '/'", allowlist: ["image.repo/"], wantErr: true },
  { name: "empty", allowlist: [""], wantErr: true },
  { name: "asterisk", allowlist: ["*"], wantErr: true },
  { name: "image with a tag", allowlist: ["test.io/test/image1:tagged"], wantErr: true },
  {
    name: "image with a digest",
    allowlist: ["test.io/test/image1@sha256:38a8906435c4dd5f4258899d46621bfd8eea3ad6ff494ee3c2f17ef0321625bd"],
    wantErr: true
  },
  { name: "trailing whitespace", allowlist: ["test.io/test/image1 "], wantErr: true },
  {
    name: "different repo wildcard",
    allowlist: ["test.io/test/image1", "test.io/test/image2", "different.repo/test/*"],
    absolutes: 2,
    wildcards: 1,
    verify: true
  },
  {
    name: "matches org wildcard",
    allowlist: ["test.io/test/image1", "test.io/test/image2", "test.io/test/*"],
    absolutes: 2,
    wildcards: 1,
    verify: false
  },
  {
    name: "matches repo wildcard",
    allowlist: ["test.io/test/image1", "test.io/test/image2", "test.io/*"],
    absolutes: 2,
    wildcards: 1,
    verify: false
  }
]

describe("preloadedImagesVerificationAllowlist: the kubelet's test table", () => {
  for (const row of kubeletTable) {
    it(row.name, () => {
      const parsed = row.allowlist.map(allowlistPattern)
      expect(parsed.some(Result.isFailure)).toBe(row.wantErr === true)
      if (row.wantErr === true) return
      const patterns = parsed.flatMap((p) => (Result.isSuccess(p) ? [p.success] : []))
      expect(new Set(patterns.filter((p) => p.kind === "exact").map((p) => p.name)).size).toBe(row.absolutes ?? 0)
      expect(patterns.filter((p) => p.kind === "prefix")).toHaveLength(row.wildcards ?? 0)
      const verification: KubeletImageVerification = { policy: "NeverVerifyAllowlistedImages", allowlist: row.allowlist }
      expect(preloadedVerdict(verification, "test.io/test/test-image:tag").access).toBe(row.verify ? "reverified" : "unverified")
    })
  }
})

describe("preloadedImagesVerificationAllowlist: more of the kubelet's rules", () => {
  it("says why an entry is refused, in the kubelet's words", () => {
    const why = (pattern: string) => Result.match(allowlistPattern(pattern), { onFailure: (e) => e, onSuccess: () => "accepted" })
    expect(why("nginx")).toBe("neither tag nor digest is accepted in an image reference: nginx")
    expect(why("docker.io/nginx")).toBe("neither tag nor digest is accepted in an image reference: docker.io/nginx")
    expect(why("docker.io/library/nginx")).toBe("accepted")
    expect(why("/*")).toBe("at least registry hostname is required")
    expect(why("")).toBe("the supplied pattern is too short: ")
    expect(why("a/*/b")).toBe("not a valid wildcard pattern, only patterns ending with '/*' are allowed: a/*/b")
    expect(why("\u00a0docker.io/library/nginx")).toBe("leading/trailing spaces are not allowed: \u00a0docker.io/library/nginx")
    expect(why("Docker.io/library/Nginx")).toBe("failed to parse as an image name: repository name must be lowercase")
    // A wildcard entry is not parsed beyond its star: the kubelet takes prefixes no name has.
    expect(why("foo/*")).toBe("accepted")
  })

  it("compares the normalised repository name: familiar spellings of a pod's image match full entries", () => {
    expect(allowlisted(["docker.io/library/nginx"], "nginx:1.25")).toBe(true)
    expect(allowlisted(["docker.io/library/nginx"], `index.docker.io/library/nginx@sha256:${"a".repeat(64)}`)).toBe(true)
    expect(allowlisted(["docker.io/library/*"], "busybox")).toBe(true)
    expect(allowlisted(["docker.io/*"], "bitnami/redis:7")).toBe(true)
    expect(allowlisted(["docker.io/library/nginx"], "nginx-unprivileged:1")).toBe(false)
    expect(allowlisted(["registry.k8s.io/*"], "registry.k8s.io.evil.example/pause")).toBe(false)
    // An entry the kubelet refuses exempts nothing (it would not start with it).
    expect(allowlisted(["nginx"], "nginx")).toBe(false)
    expect(allowlisted(["docker.io/library/nginx"], "Not A Reference")).toBe(false)
  })

  it("repositoryName is distribution's Name()", () => {
    expect(repositoryName("nginx:1")).toEqual(Result.succeed("docker.io/library/nginx"))
    expect(repositoryName(`localhost:5000/a/b@sha256:${"b".repeat(64)}`)).toEqual(Result.succeed("localhost:5000/a/b"))
  })
})

const lower = "abcdefghijklmnopqrstuvwxyz0123456789"
const componentArb = fc.string({ unit: fc.constantFrom(...lower), minLength: 1, maxLength: 8 })
const referenceArb = fc
  .record({
    domain: fc.constantFrom("docker.io", "registry.k8s.io", "ghcr.io", "localhost:5000", "registry.example.com:443"),
    path: fc.array(componentArb, { minLength: 1, maxLength: 3 }).map((c) => c.join("/")),
    tag: fc.option(fc.constantFrom("1", "latest", "v1.2.3-rc.1"), { nil: undefined })
  })
  .map(({ domain, path, tag }) => {
    const parsed = parseImageReference(`${domain}/${path}${tag === undefined ? "" : `:${tag}`}`)
    if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
    return parsed.success
  })

describe("allowlistEntry", () => {
  it("gives an entry the kubelet takes, which matches the image however it is spelt", () => {
    fc.assert(
      fc.property(referenceArb, (ref) => {
        const full = formatImageReference(ref)
        const entry = Result.getOrThrow(allowlistEntry(full))
        expect(allowlistPattern(entry)).toEqual(Result.succeed({ kind: "exact", name: entry }))
        for (const spelling of [full, `${familiarName(ref)}:x`, toNodeImageTask(ref).name]) {
          expect(allowlisted([entry], spelling)).toBe(true)
        }
      }),
      { numRuns: 300 }
    )
  })
})

describe("preloadedVerdict", () => {
  const verdict = (verification: KubeletImageVerification | undefined, image = "ghcr.io/acme/app") => preloadedVerdict(verification, image)

  it("any pod starts an image the kubelet did not pull under NeverVerify, NeverVerifyPreloadedImages and with the gate off", () => {
    expect(verdict({ policy: "NeverVerify" })).toEqual({ access: "unverified", why: "NeverVerify" })
    expect(verdict({ policy: "NeverVerifyPreloadedImages" })).toEqual({ access: "unverified", why: "NeverVerifyPreloadedImages" })
    expect(verdict({ policy: "Disabled" })).toEqual({ access: "unverified", why: "KubeletEnsureSecretPulledImages off" })
  })

  it("pods check their credentials with the registry under AlwaysVerify, and NeverVerifyAllowlistedImages without the image", () => {
    expect(verdict({ policy: "AlwaysVerify" })).toEqual({ access: "reverified", why: "AlwaysVerify" })
    const allowlist: KubeletImageVerification = { policy: "NeverVerifyAllowlistedImages", allowlist: ["ghcr.io/acme/*"] }
    expect(verdict(allowlist)).toEqual({ access: "unverified", why: "NeverVerifyAllowlistedImages (allowlisted)" })
    expect(verdict(allowlist, "ghcr.io/other/app")).toEqual({ access: "reverified", why: "NeverVerifyAllowlistedImages (not allowlisted)" })
    expect(verdict({ policy: "NeverVerifyAllowlistedImages" }).access).toBe("reverified")
  })

  it("an unknown policy says nothing", () => {
    expect(verdict(undefined).access).toBe("unknown")
    expect(verdict({ policy: "Unknown", message: "no kubelet configuration" }).access).toBe("unknown")
  })
})
