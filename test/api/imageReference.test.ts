import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  familiarName,
  formatImageReference,
  type ImageReference,
  InvalidImageReference,
  parseImageReference,
  pullReference,
  reasons,
  sameImage,
  toNodeImageTask
} from "../../src/api/imageReference.ts"

const hex64 = "0123456789abcdef".repeat(4)
const digest = `sha256:${hex64}`

const parseOk = (input: string): ImageReference => {
  const result = parseImageReference(input)
  if (Result.isFailure(result)) throw new Error(`expected ${JSON.stringify(input)} to parse: ${result.failure.reason}`)
  return result.success
}

const reasonOf = (input: string): string | undefined => {
  const result = parseImageReference(input)
  return Result.isFailure(result) ? result.failure.reason : undefined
}

describe("parseImageReference: valid references", () => {
  const cases: ReadonlyArray<readonly [string, ImageReference]> = [
    ["nginx", { domain: "docker.io", path: "library/nginx" }],
    ["nginx:1.9.1", { domain: "docker.io", path: "library/nginx", tag: "1.9.1" }],
    ["library/nginx", { domain: "docker.io", path: "library/nginx" }],
    ["docker.io/nginx", { domain: "docker.io", path: "library/nginx" }],
    ["index.docker.io/library/nginx:latest", { domain: "docker.io", path: "library/nginx", tag: "latest" }],
    ["index.docker.io/nginx", { domain: "docker.io", path: "library/nginx" }],
    ["registry.k8s.io/pause:3.9", { domain: "registry.k8s.io", path: "pause", tag: "3.9" }],
    ["localhost:5000/a/b:c", { domain: "localhost:5000", path: "a/b", tag: "c" }],
    ["localhost/a", { domain: "localhost", path: "a" }],
    // Without a slash "localhost" is a Docker Hub repository and ":5000" its tag.
    ["localhost:5000", { domain: "docker.io", path: "library/localhost", tag: "5000" }],
    [`127.0.0.1:5000/x@${digest}`, { domain: "127.0.0.1:5000", path: "x", digest }],
    [`a:b@${digest}`, { domain: "docker.io", path: "library/a", tag: "b", digest }],
    ["[::1]:5000/x:y", { domain: "[::1]:5000", path: "x", tag: "y" }],
    ["[fe80::1]/x", { domain: "[fe80::1]", path: "x" }],
    ["foo/bar__baz.qux-x---y", { domain: "docker.io", path: "foo/bar__baz.qux-x---y" }],
    ["foo/bar/baz:_tag.-x", { domain: "docker.io", path: "foo/bar/baz", tag: "_tag.-x" }],
    ["ghcr.io/org/team/image:v1.2.3-rc.1", { domain: "ghcr.io", path: "org/team/image", tag: "v1.2.3-rc.1" }],
    // upstream's splitDockerDomain: an uppercase first component is a registry host
    ["Foo/bar", { domain: "Foo", path: "bar" }],
    ["a-b.example.com:443/c", { domain: "a-b.example.com:443", path: "c" }],
    [`x@sha512:${hex64}${hex64}`, { domain: "docker.io", path: "library/x", digest: `sha512:${hex64}${hex64}` }],
    [`a:${"t".repeat(128)}`, { domain: "docker.io", path: "library/a", tag: "t".repeat(128) }]
  ]
  it.each(cases)("%s", (input, expected) => {
    expect(parseOk(input)).toStrictEqual(expected)
  })

  it("accepts a name of exactly 255 characters", () => {
    const path = "a".repeat(255 - "example.com/".length)
    expect(parseOk(`example.com/${path}`)).toStrictEqual({ domain: "example.com", path })
  })
})

describe("parseImageReference: invalid references", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["", reasons.empty],
    ["Nginx", reasons.lowercase],
    ["docker.io/Library/nginx", reasons.lowercase],
    ["foo/Bar:tag", reasons.lowercase],
    ["registry.k8s.io/Pause", reasons.lowercase],
    ["nginx:", reasons.tag],
    [":tag", reasons.format],
    ["a@sha256:short", reasons.digestLength],
    [`a@sha256:${hex64.toUpperCase()}`, reasons.digest],
    [`a@sha256:${hex64}0`, reasons.digestLength],
    ["a@sha256", reasons.digest],
    ["a@", reasons.digest],
    [`a@md5:${"0".repeat(32)}`, reasons.algorithm],
    [`a@md5:${"0".repeat(31)}`, reasons.digest],
    [`a@1sha:${hex64}`, reasons.digest],
    ["a:tag with space", reasons.tag],
    ["a:.tag", reasons.tag],
    [`a:${"t".repeat(129)}`, reasons.tag],
    [`example.com/${"a".repeat(256 - "example.com/".length)}`, reasons.tooLong],
    [`${"a/".repeat(130)}a`, reasons.tooLong],
    ["http://x/y", reasons.format],
    ["a//b", reasons.format],
    ["a/", reasons.format],
    ["/a", reasons.format],
    ["a/b/:tag", reasons.format],
    ["a..b", reasons.format],
    ["a-/b", reasons.format],
    ["-a", reasons.format],
    ["a___b", reasons.format],
    ["example.com:/a", reasons.format],
    ["-example.com/a", reasons.format],
    ["[zz]/a", reasons.format],
    // no ".", ":" or uppercase: "[0]" is read as a Docker Hub path component, and fails there
    ["[0]/a", reasons.format],
    ["a b", reasons.format],
    [hex64, reasons.identifier]
  ]
  it.each(cases)("%j -> %s", (input, reason) => {
    expect(reasonOf(input)).toBe(reason)
  })

  it("returns a tagged error carrying the input", () => {
    const result = parseImageReference("a:b c")
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      const error = result.failure
      expect(error).toBeInstanceOf(InvalidImageReference)
      expect(error).toBeInstanceOf(Error)
      expect(error._tag).toBe("InvalidImageReference")
      expect(error.reference).toBe("a:b c")
      expect(error.message).toBe('invalid image "a:b c": invalid tag format')
    }
    const empty = parseImageReference("")
    if (Result.isFailure(empty)) expect(empty.failure.message).toBe("image can not be empty")
  })
})

describe("formatting and derived names", () => {
  it.each([
    ["nginx", "docker.io/library/nginx"],
    ["nginx:1.9.1", "docker.io/library/nginx:1.9.1"],
    [`a:b@${digest}`, `docker.io/library/a:b@${digest}`],
    ["localhost:5000/a/b:c", "localhost:5000/a/b:c"]
  ])("formatImageReference(%s) = %s", (input, expected) => {
    expect(formatImageReference(parseOk(input))).toBe(expected)
  })

  it.each([
    ["docker.io/library/nginx:1", "nginx"],
    ["docker.io/foo/bar", "foo/bar"],
    ["docker.io/library/a/b", "library/a/b"],
    ["registry.k8s.io/pause", "registry.k8s.io/pause"],
    ["localhost:5000/a/b", "localhost:5000/a/b"],
    // would be read back as a registry without the prefix
    ["docker.io/foo.bar/baz", "docker.io/foo.bar/baz"],
    ["docker.io/localhost/x", "docker.io/localhost/x"]
  ])("familiarName(%s) = %s", (input, expected) => {
    expect(familiarName(parseOk(input))).toBe(expected)
  })

  it.each([
    ["nginx", { name: "nginx", tag: "latest" }, "nginx:latest"],
    ["nginx:1.9.1", { name: "nginx", tag: "1.9.1" }, "nginx:1.9.1"],
    [`registry.k8s.io/pause@${digest}`, { name: "registry.k8s.io/pause", tag: digest }, `registry.k8s.io/pause@${digest}`],
    [`a:b@${digest}`, { name: "a", tag: digest }, `a@${digest}`]
  ])("toNodeImageTask(%s) and pullReference", (input, task, pull) => {
    expect(toNodeImageTask(parseOk(input))).toStrictEqual(task)
    expect(pullReference(task)).toBe(pull)
  })

  it.each([
    ["nginx", "docker.io/library/nginx:latest", true],
    ["nginx:1", "index.docker.io/library/nginx:1", true],
    ["nginx:1", "nginx:2", false],
    ["nginx", `nginx@${digest}`, false],
    [`nginx@${digest}`, `docker.io/library/nginx:x@${digest}`, true],
    [`nginx:1@${digest}`, "nginx:1", false],
    [`nginx@${digest}`, `nginx@sha256:${"f".repeat(64)}`, false],
    ["nginx", "foo/nginx", false],
    ["registry.k8s.io/pause:3.9", "k8s.gcr.io/pause:3.9", false]
  ])("sameImage(%s, %s) = %s", (a, b, expected) => {
    expect(sameImage(parseOk(a), parseOk(b))).toBe(expected)
    expect(sameImage(parseOk(b), parseOk(a))).toBe(expected)
  })
})

// --- arbitraries built from the grammar -------------------------------------------------

const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength })

const lower = "abcdefghijklmnopqrstuvwxyz0123456789"
const hostChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const wordChars = `${hostChars}_`

const separatorArb = fc.oneof(
  fc.constant("."),
  fc.constant("_"),
  fc.constant("__"),
  fc.integer({ min: 1, max: 3 }).map((n) => "-".repeat(n))
)
const pathComponentArb = fc
  .tuple(chars(lower, 1, 6), fc.array(fc.tuple(separatorArb, chars(lower, 1, 6)), { maxLength: 3 }))
  .map(([head, rest]) => head + rest.map(([s, a]) => s + a).join(""))
const pathArb = fc.array(pathComponentArb, { minLength: 1, maxLength: 4 }).map((cs) => cs.join("/"))

const hostComponentArb = fc.oneof(
  chars(hostChars, 1, 1),
  fc.tuple(chars(hostChars, 1, 1), chars(`${hostChars}-`, 0, 8), chars(hostChars, 1, 1)).map((p) => p.join(""))
)
const portArb = chars("0123456789", 1, 5)
const withPort = (host: fc.Arbitrary<string>, required: boolean) =>
  fc.tuple(host, required ? portArb : fc.option(portArb, { nil: undefined })).map(([h, p]) => (p === undefined ? h : `${h}:${p}`))
const domainArb = fc.oneof(
  fc.constantFrom("docker.io", "index.docker.io", "registry.k8s.io", "ghcr.io", "quay.io"),
  withPort(
    fc.array(hostComponentArb, { minLength: 2, maxLength: 4 }).map((cs) => cs.join(".")),
    false
  ),
  withPort(fc.constant("localhost"), false),
  withPort(hostComponentArb, true),
  // a real IPv6 literal always has a colon, which is what makes it read as a registry
  withPort(
    fc.tuple(chars("0123456789abcdefABCDEF:", 0, 6), chars("0123456789abcdefABCDEF:", 0, 6)).map(([a, b]) => `[${a}:${b}]`),
    false
  ),
  // a single component is a registry only with uppercase in it (upstream's rule)
  hostComponentArb.filter((h) => h.toLowerCase() !== h)
)
const tagArb = fc.tuple(chars(wordChars, 1, 1), chars(`${wordChars}.-`, 0, 127)).map(([a, b]) => a + b)
const digestArb = fc.oneof(
  chars("0123456789abcdef", 64, 64).map((h) => `sha256:${h}`),
  chars("0123456789abcdef", 96, 96).map((h) => `sha384:${h}`),
  chars("0123456789abcdef", 128, 128).map((h) => `sha512:${h}`)
)

// Generates references already in normal form, as the parser returns them.
const referenceArb: fc.Arbitrary<ImageReference> = fc
  .record({
    domain: domainArb,
    path: pathArb,
    tag: fc.option(tagArb, { nil: undefined }),
    digest: fc.option(digestArb, { nil: undefined })
  })
  .map(({ domain, path, tag, digest }): ImageReference => {
    const d = domain === "index.docker.io" ? "docker.io" : domain
    const p = d === "docker.io" && !path.includes("/") ? `library/${path}` : path
    return {
      domain: d,
      path: p,
      ...(tag === undefined ? {} : { tag }),
      ...(digest === undefined ? {} : { digest })
    }
  })
  .filter((r) => r.domain.length + 1 + r.path.length <= 255)

const insertAt = (s: string, index: number, insert: string) => s.slice(0, index) + insert + s.slice(index)

describe("properties", () => {
  it("parse(format(ref)) is ref, and format is stable", () => {
    fc.assert(
      fc.property(referenceArb, (ref) => {
        const text = formatImageReference(ref)
        const parsed = parseOk(text)
        expect(parsed).toStrictEqual(ref)
        expect(formatImageReference(parsed)).toBe(text)
      }),
      { numRuns: 500 }
    )
  })

  it("familiarName round-trips with a tag", () => {
    fc.assert(
      fc.property(referenceArb, tagArb, (ref, tag) => {
        const parsed = parseOk(`${familiarName(ref)}:${tag}`)
        expect(parsed).toStrictEqual({ domain: ref.domain, path: ref.path, tag })
      }),
      { numRuns: 500 }
    )
  })

  it("never throws on arbitrary input, and what it accepts is a fixed point", () => {
    const referenceish = fc.string({ unit: fc.constantFrom(..."aZ09:/@._-[]f "), maxLength: 40 })
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), referenceish), (input) => {
        const result = parseImageReference(input)
        expect(Result.isResult(result)).toBe(true)
        if (Result.isFailure(result)) {
          expect(result.failure.reason.length).toBeGreaterThan(0)
          expect(result.failure.reference).toBe(input)
        } else {
          const text = formatImageReference(result.success)
          expect(parseOk(text)).toStrictEqual(result.success)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("rejects an uppercase letter anywhere in the path", () => {
    fc.assert(
      fc.property(referenceArb, fc.nat(), chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1, 1), (ref, n, upper) => {
        const mutated = { ...ref, path: insertAt(ref.path, n % (ref.path.length + 1), upper) }
        expect(reasonOf(formatImageReference(mutated))).toBe(reasons.lowercase)
      })
    )
  })

  it("rejects an empty path component", () => {
    fc.assert(
      fc.property(referenceArb, fc.nat(), (ref, n) => {
        // next to an existing slash, or at either end of the path
        const positions = [0, ref.path.length, ...[...ref.path].flatMap((c, i) => (c === "/" ? [i] : []))]
        const mutated = { ...ref, path: insertAt(ref.path, positions[n % positions.length] ?? 0, "/") }
        expect(reasonOf(formatImageReference(mutated))).toBe(reasons.format)
      })
    )
  })

  it("rejects a tag with an invalid character", () => {
    const bad = fc.constantFrom(..." !\"#$%&'()*+,/:;<=>?@[\\]^`{|}~\té")
    fc.assert(
      fc.property(referenceArb, tagArb, fc.nat(), bad, (ref, tag, n, c) => {
        // a leading "." or "-" is also invalid, so any position is fair
        const mutated = { ...ref, tag: insertAt(tag, n % (tag.length + 1), c) }
        const reason = reasonOf(formatImageReference(mutated))
        expect(reason).toBeDefined()
        expect(reason?.length).toBeGreaterThan(0)
      })
    )
    fc.assert(
      fc.property(referenceArb, tagArb, fc.constantFrom(".", "-"), (ref, tag, c) => {
        expect(reasonOf(formatImageReference({ ...ref, tag: c + tag.slice(1) }))).toBe(reasons.tag)
      })
    )
  })

  it("pullReference(toNodeImageTask(ref)) names the same repository, with @ only for digests", () => {
    fc.assert(
      fc.property(referenceArb, (ref) => {
        const pull = pullReference(toNodeImageTask(ref))
        const parsed = parseOk(pull)
        expect({ domain: parsed.domain, path: parsed.path }).toStrictEqual({ domain: ref.domain, path: ref.path })
        expect(pull.includes("@")).toBe(ref.digest !== undefined)
        if (ref.digest !== undefined) expect(parsed).toStrictEqual({ domain: ref.domain, path: ref.path, digest: ref.digest })
        else expect(parsed.tag).toBe(ref.tag ?? "latest")
        expect(sameImage(parsed, ref)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })
})
