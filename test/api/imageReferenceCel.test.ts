// The image reference rules of the CRDs against the decoder's parser: the same rejections with
// the same messages, on chosen cases and on generated strings over the grammar's alphabet.
import fc from "fast-check"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseImageReference } from "../../src/api/imageReference.ts"
import { imageCelRules } from "../../src/api/imageReferenceCel.ts"
import { notPrintableAscii } from "../../src/api/goQuoteCel.ts"
import { rawControls, titleEscapeReference } from "../support/hostileText.ts"
import { celViolations } from "../../harness/apiserver/admission/celRules.ts"
import type { StructuralSchema } from "../../harness/apiserver/admission/structuralSchema.ts"

const schema: StructuralSchema = { type: "string", "x-kubernetes-validations": [...imageCelRules] }
const celMessage = (image: string): string | undefined => celViolations(schema, image)[0]?.message
const decoderMessage = (image: string): string | undefined => {
  const parsed = parseImageReference(image)
  return Result.isFailure(parsed) ? parsed.failure.message : undefined
}

const hex = (n: number) => "a".repeat(n)

describe("image reference CEL rules", () => {
  it.each([
    ["", "image can not be empty"],
    ["Nginx:1", 'invalid image "Nginx:1": repository name must be lowercase'],
    ["...", 'invalid image "...": invalid reference format'],
    ["nginx:-1", 'invalid image "nginx:-1": invalid tag format'],
    ["nginx@sha256:abc", 'invalid image "nginx@sha256:abc": invalid checksum digest length'],
    [`nginx@md5:${hex(32)}`, `invalid image "nginx@md5:${hex(32)}": unsupported digest algorithm`],
    [`nginx@sha256:${"A".repeat(64)}`, `invalid image "nginx@sha256:${"A".repeat(64)}": invalid digest format`],
    [hex(64), `invalid image "${hex(64)}": cannot specify 64-byte hexadecimal strings`],
    [`${hex(238)}`, `invalid image "${hex(238)}": repository name must not be more than 255 characters`],
    ["localhost:port/x", 'invalid image "localhost:port/x": invalid reference format']
  ])("%j: %s", (image, message) => {
    expect(celMessage(image)).toBe(message)
    expect(decoderMessage(image)).toBe(message)
  })

  it.each([
    "nginx",
    "nginx:1.9.1",
    "busybox:1.29.2",
    "Foo/bar",
    "localhost/x",
    "localhost:5000/a/b:c",
    "registry.k8s.io/pause:3.10",
    "[::1]:5000/x",
    `nginx@sha256:${hex(64)}`,
    `nginx:1@sha512:${hex(128)}`,
    hex(237),
    `a/${hex(243)}`,
    `docker.io/${hex(237)}`,
    `index.docker.io/${hex(237)}`,
    `index.docker.io/a/${hex(243)}`
  ])("%j is accepted by both", (image) => {
    expect(celMessage(image)).toBeUndefined()
    expect(decoderMessage(image)).toBeUndefined()
  })

  it("quote a reference with quotes and backslashes as Go's %q, in both", () => {
    const message = 'invalid image "a\\"b\\\\c": invalid reference format'
    expect(celMessage('a"b\\c')).toBe(message)
    expect(decoderMessage('a"b\\c')).toBe(message)
  })

  it("escape a terminal title sequence in the decoder, and leave it out in the CRD rule (CEL cannot escape it)", () => {
    expect(decoderMessage(titleEscapeReference)).toBe('invalid image "nginx\\x1b]0;pwned\\a\\u202e:latest": invalid reference format')
    expect(celMessage(titleEscapeReference)).toBe(`invalid image ${notPrintableAscii}: invalid reference format`)
    expect(rawControls(celMessage(titleEscapeReference) ?? "")).toEqual([])
  })

  it("agree on every length around the name limit, with and without a registry", () => {
    for (const prefix of ["", "a/", "docker.io/", "docker.io/a/", "index.docker.io/", "index.docker.io/a/", "r.io/", "r.io:5/a/"]) {
      for (let n = 225; n <= 265; n++) {
        const image = `${prefix}${hex(n)}:t`
        expect(celMessage(image), image).toBe(decoderMessage(image))
      }
    }
  })

  it("agree on generated strings over the grammar's alphabet", () => {
    const part = fc.string({ unit: fc.constantFrom(..."aZ09._-/:@[]"), maxLength: 12 })
    const digest = fc.constantFrom("", `@sha256:${hex(64)}`, "@sha256:", `@x+y:${hex(40)}`, `@SHA256:${hex(64)}`)
    fc.assert(
      fc.property(part, part, digest, (a, b, d) => {
        const image = `${a}${b}${d}`
        expect(celMessage(image), image).toBe(decoderMessage(image))
      }),
      { numRuns: 3000 }
    )
  })
})
