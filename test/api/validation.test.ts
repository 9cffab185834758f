import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../src/api/decode.ts"
import type { FieldError, InvalidObject } from "../../src/api/invalidObject.ts"
import { effectiveImagePullPolicy } from "../../src/api/pullPolicySpelling.ts"

const job = (spec: Record<string, unknown>) => ({ metadata: { name: "j", namespace: "ns" }, spec })
const listJob = (spec: Record<string, unknown>) => ({ metadata: { name: "l", namespace: "ns" }, spec })
const nodeImage = (images: Record<string, unknown>) => ({ metadata: { name: "node-1" }, spec: { images } })

const errorsOf = <A>(result: Result.Result<A, { readonly errors: ReadonlyArray<FieldError> }>) =>
  Result.isFailure(result) ? result.failure.errors : []

describe("ImagePullJob", () => {
  it("fills in the SPEC defaults", () => {
    const decoded = decodeImagePullJob(job({ image: "nginx:1.9.1" }))
    expect(Result.isSuccess(decoded) && decoded.success.spec).toEqual({
      image: "nginx:1.9.1",
      parallelism: 1,
      completionPolicy: { type: "Always" },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 }
    })
    // Not a schema default (issue 26: the deprecated pullPolicy.type is read when it is unset).
    expect(Result.isSuccess(decoded) && effectiveImagePullPolicy(decoded.success.spec)).toBe("IfNotPresent")
  })

  it("keeps what the user set", () => {
    const spec = {
      image: `registry.k8s.io/pause@sha256:${"a".repeat(64)}`,
      parallelism: "25%",
      selector: { matchLabels: { zone: "a" } },
      completionPolicy: { type: "Always", activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
      pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 },
      pullSecrets: ["s"],
      sandboxConfig: { labels: { a: "b" } },
      imagePullPolicy: "Always"
    }
    const decoded = decodeImagePullJob(job(spec))
    expect(Result.isSuccess(decoded) && decoded.success.spec).toEqual(spec)
  })

  it.each<[string, Record<string, unknown>, FieldError]>([
    ["empty image", { image: "" }, { path: "spec.image", message: "image can not be empty" }],
    [
      "invalid image",
      { image: "Nginx:1" },
      {
        path: "spec.image",
        message: 'invalid image "Nginx:1": repository name must be lowercase'
      }
    ],
    [
      "names and labels",
      { image: "a", selector: { names: ["n1"], matchLabels: { a: "b" } } },
      {
        path: "spec.selector",
        message: "can not set both names and labelSelector in this spec.selector"
      }
    ],
    [
      "names and expressions",
      {
        image: "a",
        selector: { names: ["n1"], matchExpressions: [{ key: "a", operator: "Exists" }] }
      },
      { path: "spec.selector", message: "can not set both names and labelSelector in this spec.selector" }
    ],
    [
      "duplicate names",
      { image: "a", selector: { names: ["n1", "n2", "n1"] } },
      {
        path: "spec.selector.names",
        message: "duplicated name in selector names"
      }
    ],
    [
      "bad selector",
      { image: "a", selector: { matchExpressions: [{ key: "a", operator: "In" }] } },
      {
        path: "spec.selector",
        message: "invalid selector: matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
      }
    ],
    [
      "selector and podSelector",
      { image: "a", selector: {}, podSelector: { matchLabels: { a: "b" } } },
      {
        path: "spec",
        message: "can not set both selector and podSelector"
      }
    ],
    [
      "bad podSelector",
      { image: "a", podSelector: { matchLabels: { "a b": "c" } } },
      {
        path: "spec.podSelector",
        message: expect.stringMatching(/^invalid podSelector: matchLabels: Invalid value: "a b": /) as unknown as string
      }
    ],
    [
      "deadline below the default timeout",
      { image: "a", completionPolicy: { activeDeadlineSeconds: 599 } },
      {
        path: "spec.completionPolicy.activeDeadlineSeconds",
        message: "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)"
      }
    ],
    [
      "deadline below a set timeout",
      {
        image: "a",
        completionPolicy: { activeDeadlineSeconds: 700 },
        pullPolicy: { timeoutSeconds: 800 }
      },
      {
        path: "spec.completionPolicy.activeDeadlineSeconds",
        message: "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)"
      }
    ],
    [
      "deadline with Never",
      { image: "a", completionPolicy: { type: "Never", activeDeadlineSeconds: 1200 } },
      {
        path: "spec.completionPolicy",
        message: "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"
      }
    ],
    [
      "ttl with Never",
      { image: "a", completionPolicy: { type: "Never", ttlSecondsAfterFinished: 10 } },
      {
        path: "spec.completionPolicy",
        message: "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"
      }
    ],
    [
      "unknown completion type",
      { image: "a", completionPolicy: { type: "Sometimes" } },
      {
        path: "spec.completionPolicy.type",
        message: 'unknown type of completionPolicy: "Sometimes"'
      }
    ],
    [
      "negative parallelism",
      { image: "a", parallelism: -1 },
      {
        path: "spec.parallelism",
        message: "parallelism must be a non-negative integer or a percentage from 0% to 100%"
      }
    ],
    [
      "percentage over 100",
      { image: "a", parallelism: "101%" },
      {
        path: "spec.parallelism",
        message: "parallelism must be a non-negative integer or a percentage from 0% to 100%"
      }
    ],
    [
      "not a percentage",
      { image: "a", parallelism: "ten" },
      {
        path: "spec.parallelism",
        message: "parallelism must be a non-negative integer or a percentage from 0% to 100%"
      }
    ]
  ])("rejects %s with the SPEC message", (_, spec, expected) => {
    expect(errorsOf(decodeImagePullJob(job(spec)))).toContainEqual(expected)
  })

  it("reports every error of one object together", () => {
    const errors = errorsOf(
      decodeImagePullJob(
        job({
          image: "UPPER",
          parallelism: "x%",
          selector: { names: ["a", "a"], matchLabels: { a: "b" } },
          podSelector: {},
          completionPolicy: { type: "Never", ttlSecondsAfterFinished: 1 }
        })
      )
    )
    expect(errors.map((e) => e.path)).toEqual([
      "spec.image",
      "spec.selector",
      "spec.selector.names",
      "spec",
      "spec.parallelism",
      "spec.completionPolicy"
    ])
  })

  it("reports shape errors with their field paths, never a stack trace", () => {
    const result = decodeImagePullJob(job({ image: 5, pullPolicy: { timeoutSeconds: "x", backoffLimit: -1 } }))
    expect(errorsOf(result).map((e) => e.path)).toEqual(["spec.image", "spec.pullPolicy.timeoutSeconds", "spec.pullPolicy.backoffLimit"])
    expect(Result.isFailure(result) && result.failure.message).toMatch(/^ImagePullJob "j" is invalid: spec\.image: /)
  })

  it("accepts an empty selector and 0 parallelism (pause)", () => {
    expect(errorsOf(decodeImagePullJob(job({ image: "a", selector: {}, parallelism: 0 })))).toEqual([])
    expect(errorsOf(decodeImagePullJob(job({ image: "a", parallelism: "0%" })))).toEqual([])
  })
})

describe("ImageListPullJob", () => {
  it("rejects duplicates, too many images and invalid references together", () => {
    const images = Array.from({ length: 256 }, (_, i) => `img-${i}`)
    images.push("img-0", "Bad")
    expect(errorsOf(decodeImageListPullJob(listJob({ images })))).toEqual([
      { path: "spec.images", message: "the maximum number of images cannot > 255" },
      { path: "spec.images", message: "images cannot have duplicate values" },
      { path: "spec.images[257]", message: 'invalid image "Bad": repository name must be lowercase' }
    ])
  })

  it("applies the job rules to its template", () => {
    expect(errorsOf(decodeImageListPullJob(listJob({ images: ["a"], selector: {}, podSelector: {} })))).toEqual([
      { path: "spec", message: "can not set both selector and podSelector" }
    ])
  })

  it("requires at least one image", () => {
    expect(errorsOf(decodeImageListPullJob(listJob({ images: [] }))).map((e) => e.path)).toEqual(["spec.images"])
  })
})

describe("NodeImage", () => {
  it("accepts the seed's hand-written tag without createdAt", () => {
    const decoded = decodeNodeImage(nodeImage({ ubuntu: { tags: [{ tag: "latest", pullPolicy: { ttlSecondsAfterFinished: 300 } }] } }))
    expect(Result.isSuccess(decoded) && decoded.success.spec.images?.["ubuntu"]?.tags[0]).toEqual({
      tag: "latest",
      pullPolicy: { ttlSecondsAfterFinished: 300 },
      version: 0,
      imagePullPolicy: "IfNotPresent"
    })
  })

  it("accepts an empty spec, as a new NodeImage has", () => {
    expect(errorsOf(decodeNodeImage({ metadata: { name: "n" }, spec: {} }))).toEqual([])
    expect(errorsOf(decodeNodeImage({ metadata: { name: "n" } }))).toEqual([])
  })

  it("rejects with the SPEC messages", () => {
    expect(
      errorsOf(
        decodeNodeImage(
          nodeImage({
            "": { tags: [] },
            nginx: { tags: [{ tag: "" }, { tag: "1.9", version: -1 }, { tag: "1.9" }] },
            "registry.k8s.io/pause": { tags: [{ tag: `sha256:${"0".repeat(64)}` }] }
          })
        )
      )
    ).toEqual([
      { path: "spec.images", message: "image name can not be empty" },
      { path: "spec.images.nginx.tags[0].tag", message: 'tag for image "nginx" can not be empty' },
      { path: "spec.images.nginx.tags[1].version", message: 'version for "nginx:1.9" can not be less than 0' },
      { path: "spec.images.nginx.tags[2].tag", message: 'duplicated tag "1.9" for image "nginx"' }
    ])
  })

  it("rejects more than 256 images", () => {
    const images = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`img-${i}`, { tags: [{ tag: "v1" }] }]))
    expect(errorsOf(decodeNodeImage(nodeImage(images)))).toEqual([
      { path: "spec.images", message: "spec images length 257 can not be more than 256" }
    ])
  })

  it("names a task whose name and tag do not form a reference", () => {
    expect(errorsOf(decodeNodeImage(nodeImage({ "Bad/Name": { tags: [{ tag: "v1" }] } })))).toEqual([
      { path: 'spec.images["Bad/Name"].tags[0].tag', message: 'invalid image "Bad/Name:v1": repository name must be lowercase' }
    ])
  })
})

describe("decoders on arbitrary input", () => {
  const decoders: ReadonlyArray<(input: unknown) => Result.Result<unknown, InvalidObject>> = [
    decodeImagePullJob,
    decodeImageListPullJob,
    decodeNodeImage
  ]

  it("return a value or a typed error, never throw", () => {
    fc.assert(
      fc.property(fc.anything(), fc.nat(2), (input, i) => {
        const result = decoders[i]!(input)
        expect(Result.isSuccess(result) || result.failure._tag === "InvalidObject").toBe(true)
      }),
      { numRuns: 2000 }
    )
  })

  it("never throw on objects shaped like the kinds", () => {
    const spec = fc.dictionary(
      fc.constantFrom("image", "images", "parallelism", "selector", "podSelector", "completionPolicy", "pullPolicy"),
      fc.jsonValue()
    )
    fc.assert(
      fc.property(fc.record({ metadata: fc.jsonValue(), spec }), fc.nat(2), (input, i) => {
        const result = decoders[i]!(input)
        if (Result.isFailure(result)) expect(result.failure.errors.length).toBeGreaterThan(0)
      }),
      { numRuns: 2000 }
    )
  })
})
