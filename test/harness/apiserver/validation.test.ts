import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../../src/api/decode.ts"
import { imagePullJob, ipjPath, kruise, namespace, request, startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const decoderMessages = (kind: string, input: unknown): ReadonlyArray<string> => {
  const result =
    kind === "ImagePullJob"
      ? Result.map(decodeImagePullJob(input), () => undefined)
      : kind === "ImageListPullJob"
        ? Result.map(decodeImageListPullJob(input), () => undefined)
        : Result.map(decodeNodeImage(input), () => undefined)
  return Result.isFailure(result) ? result.failure.errors.map((e) => e.message) : []
}

const listJobPath = (ns: string) => `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagelistpulljobs`
const nodeImagePath = "/apis/apps.kruise.io/v1alpha1/nodeimages"

describe("CRD validation: schema and CEL rules, 422 with field paths", () => {
  const cases: ReadonlyArray<readonly [string, string, string, Record<string, unknown>]> = [
    [
      "ImagePullJob",
      "spec.selector",
      "can not set both names and labelSelector in this spec.selector",
      { image: "a", selector: { names: ["n"], matchLabels: { a: "b" } } }
    ],
    ["ImagePullJob", "spec.selector.names", "duplicated name in selector names", { image: "a", selector: { names: ["n", "n"] } }],
    ["ImagePullJob", "spec", "can not set both selector and podSelector", { image: "a", selector: {}, podSelector: {} }],
    [
      "ImagePullJob",
      "spec.completionPolicy",
      "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
      { image: "a", completionPolicy: { type: "Never", ttlSecondsAfterFinished: 5 } }
    ],
    [
      "ImagePullJob",
      "spec",
      "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
      { image: "a", completionPolicy: { activeDeadlineSeconds: 100 } }
    ],
    [
      "ImagePullJob",
      "spec.parallelism",
      "parallelism must be a non-negative integer or a percentage from 0% to 100%",
      { image: "a", parallelism: "200%" }
    ],
    ["ImageListPullJob", "spec.images", "images cannot have duplicate values", { images: ["a", "b", "a"] }],
    // Upstream's webhook rules, refused by the CRD at once (issue 11), in upstream's words.
    ["ImagePullJob", "spec.image", 'invalid image "Nginx:1": repository name must be lowercase', { image: "Nginx:1" }],
    ["ImagePullJob", "spec.image", "image can not be empty", { image: "" }],
    ["ImageListPullJob", "spec.images[1]", 'invalid image "...": invalid reference format', { images: ["nginx", "..."] }],
    [
      "ImagePullJob",
      "spec.selector",
      "invalid selector: matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      { image: "a", selector: { matchExpressions: [{ key: "a", operator: "In" }] } }
    ],
    [
      "ImagePullJob",
      "spec.podSelector",
      `invalid podSelector: matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', ` +
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " +
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      { image: "a", podSelector: { matchLabels: { "bad key!": "x" } } }
    ],
    [
      "ImageListPullJob",
      "spec.selector",
      'invalid selector: matchExpressions[0].values[0]: Invalid value: "a b": a valid label must be an empty string or consist of ' +
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or " +
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      { images: ["a"], selector: { matchExpressions: [{ key: "zone", operator: "In", values: ["a b"] }] } }
    ],
    [
      "ImagePullJob",
      "spec.completionPolicy.type",
      'unknown type of completionPolicy: "Sometimes"',
      { image: "a", completionPolicy: { type: "Sometimes" } }
    ],
    // Issue 26: the seed's deprecated spelling may not contradict upstream's.
    [
      "ImagePullJob",
      "spec.pullPolicy.type",
      "pullPolicy.type Always differs from imagePullPolicy IfNotPresent: pullPolicy.type is deprecated, set imagePullPolicy only",
      { image: "nginx", imagePullPolicy: "IfNotPresent", pullPolicy: { type: "Always" } }
    ],
    [
      "ImageListPullJob",
      "spec.pullPolicy.type",
      "pullPolicy.type IfNotPresent differs from imagePullPolicy Always: pullPolicy.type is deprecated, set imagePullPolicy only",
      { images: ["nginx"], imagePullPolicy: "Always", pullPolicy: { type: "IfNotPresent" } }
    ]
  ]

  it.each(cases)("%s %s: %s", async (kind, field, message, spec) => {
    const ns = await namespace(server)
    const path = kind === "ImagePullJob" ? ipjPath(ns) : listJobPath(ns)
    const answer = await request(server, path, { method: "POST", body: { apiVersion: kruise, kind, metadata: { name: "bad" }, spec } })
    expect(answer.status).toBe(422)
    expect(answer.json.reason).toBe("Invalid")
    expect(answer.json.details).toMatchObject({ name: "bad", group: "apps.kruise.io", kind })
    const cause = answer.json.details.causes.find((c: { message: string }) => c.message.endsWith(message))
    expect(cause, JSON.stringify(answer.json.details.causes)).toMatchObject({ reason: "FieldValueInvalid", field })
    expect(cause.message).toMatch(/^Invalid value: "(object|array|string|)": /)
    // The message the decoders give for the same object: one rule, two places.
    expect(decoderMessages(kind, { metadata: { name: "bad" }, spec })).toContain(message)
  })

  it("NodeImage rules, with the messages the SPEC gives", async () => {
    const name = unique("node")
    const spec = { images: { nginx: { tags: [{ tag: "v1" }, { tag: "v1" }, { tag: "v2", version: -1 }] } } }
    const answer = await request(server, nodeImagePath, {
      method: "POST",
      body: { apiVersion: kruise, kind: "NodeImage", metadata: { name }, spec }
    })
    expect(answer.status).toBe(422)
    const messages = answer.json.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`)
    expect(messages).toContain(`spec.images: Invalid value: "object": duplicated tag "v1" for image "nginx"`)
    expect(messages).toContain(`spec.images: Invalid value: "object": version for "nginx:v2" can not be less than 0`)
    expect(answer.json.message).toMatch(/^NodeImage\.apps\.kruise\.io ".*" is invalid: \[spec\.images: /)
    expect(decoderMessages("NodeImage", { metadata: { name }, spec })).toContain('duplicated tag "v1" for image "nginx"')
  })

  it("a node keeps as many tags of one image as jobs ask for: one per job, as the controller writes them", async () => {
    // Upstream has no limit on tags; a bound the controller's writes could reach would stall every job on the node.
    const tag = (i: number) => ({
      tag: `1.${i}`,
      createdAt: "2026-01-01T00:00:00Z",
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 300, activeDeadlineSeconds: 1200 },
      ownerReferences: [{ apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", name: `job-${i}`, namespace: "ci", uid: `uid-${i}` }],
      version: 0,
      imagePullPolicy: "IfNotPresent"
    })
    const name = unique("node")
    const tags = Array.from({ length: 300 }, (_, i) => tag(i))
    const body = { apiVersion: kruise, kind: "NodeImage", metadata: { name }, spec: { images: { "registry.example/app": { tags } } } }
    const created = await request(server, nodeImagePath, { method: "POST", body })
    expect(created.status, JSON.stringify(created.json.details?.causes)).toBe(201)
    expect(created.json.spec.images["registry.example/app"].tags).toHaveLength(300)
    expect(decoderMessages("NodeImage", body)).toEqual([])
  })

  it("a duplicate among an image's first 16 tags is refused at once; later ones are left to the controller's decoder", async () => {
    // 20 tags, the one at `duplicateAt` a second t0.
    const tags = (duplicateAt: number) => Array.from({ length: 20 }, (_, i) => ({ tag: `t${i === duplicateAt ? 0 : i}` }))
    const post = (duplicateAt: number) =>
      request(server, nodeImagePath, {
        method: "POST",
        body: {
          apiVersion: kruise,
          kind: "NodeImage",
          metadata: { name: unique("node") },
          spec: { images: { nginx: { tags: tags(duplicateAt) } } }
        }
      })
    const early = await post(3)
    expect(early.status).toBe(422)
    expect(early.json.details.causes.map((c: { message: string }) => c.message)).toContain(
      'Invalid value: "object": duplicated tag "t0" for image "nginx"'
    )
    // The CRD rule compares the first tags only (its cost is quadratic); the decoder marks the rest.
    expect((await post(18)).status).toBe(201)
    expect(decoderMessages("NodeImage", { metadata: { name: "n" }, spec: { images: { nginx: { tags: tags(18) } } } })).toContain(
      'duplicated tag "t0" for image "nginx"'
    )
  })

  it("schema keywords: required, types, enums, bounds, with kube-openapi's messages", async () => {
    const ns = await namespace(server)
    const answer = await request(server, ipjPath(ns), {
      method: "POST",
      body: {
        apiVersion: kruise,
        kind: "ImagePullJob",
        metadata: { name: "bad" },
        spec: { parallelism: true, completionPolicy: { type: "Sometimes" }, pullPolicy: { timeoutSeconds: 0 }, pullSecrets: "one" }
      }
    })
    expect(answer.status).toBe(422)
    const messages = answer.json.details.causes.map(
      (c: { field: string; message: string; reason: string }) => `${c.reason} ${c.field}: ${c.message}`
    )
    expect(messages).toEqual(
      expect.arrayContaining([
        "FieldValueRequired spec.image: Required value",
        `FieldValueInvalid spec.parallelism: Invalid value: "boolean": spec.parallelism in body must be of type integer,string: "boolean"`,
        `FieldValueInvalid spec.completionPolicy.type: Invalid value: "string": unknown type of completionPolicy: "Sometimes"`,
        "FieldValueInvalid spec.pullPolicy.timeoutSeconds: Invalid value: 0: spec.pullPolicy.timeoutSeconds in body should be greater than 0",
        `FieldValueInvalid spec.pullSecrets: Invalid value: "string": spec.pullSecrets in body must be of type array: "string"`
      ])
    )
    const noSpec = await request(server, ipjPath(ns), {
      method: "POST",
      body: { apiVersion: kruise, kind: "ImagePullJob", metadata: { name: "bad" } }
    })
    expect(noSpec.json.details.causes).toEqual([{ reason: "FieldValueRequired", message: "Required value", field: "spec" }])
  })

  it("the status subresource validates status", async () => {
    const ns = await namespace(server)
    await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("job") })
    const answer = await request(server, `${ipjPath(ns, "job")}/status`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { status: { desired: -1 } }
    })
    expect(answer.status).toBe(422)
    expect(answer.json.details.causes[0]).toMatchObject({ field: "status.desired" })
  })
})

describe("unknown fields and defaults", () => {
  it("fieldValidation=Strict (kubectl's default) rejects unknown fields with 400, naming each", async () => {
    const ns = await namespace(server)
    const answer = await request(server, `${ipjPath(ns)}?fieldValidation=Strict`, {
      method: "POST",
      body: { ...imagePullJob("job", { foo: 1, selector: { bar: 2 } }), extra: true, metadata: { name: "job", color: "red" } }
    })
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ reason: "BadRequest", code: 400 })
    expect(answer.json.message).toBe(
      `ImagePullJob in version "v1alpha1" cannot be handled as a ImagePullJob: strict decoding error: ` +
        `unknown field "spec.foo", unknown field "spec.selector.bar", unknown field "extra", unknown field "metadata.color"`
    )
    await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("job") })
    const patched = await request(server, `${ipjPath(ns, "job")}?fieldValidation=Strict`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { spec: { foo: 1 } }
    })
    expect(patched.status).toBe(400)
    expect(patched.json.message).toBe(`strict decoding error: unknown field "spec.foo"`)
  })

  it("Warn (the default) prunes them with a Warning header; Ignore prunes them silently", async () => {
    const ns = await namespace(server)
    const warned = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("warned", { foo: 1 }) })
    expect(warned.status).toBe(201)
    expect(warned.json.spec.foo).toBeUndefined()
    expect(warned.headers.get("warning")).toBe(`299 - "unknown field \\"spec.foo\\""`)
    const ignored = await request(server, `${ipjPath(ns)}?fieldValidation=Ignore`, {
      method: "POST",
      body: imagePullJob("ignored", { foo: 1 })
    })
    expect(ignored.status).toBe(201)
    expect(ignored.json.spec.foo).toBeUndefined()
    expect(ignored.headers.get("warning")).toBeNull()
  })

  it("the CRD's defaults are applied on create and on every write", async () => {
    const ns = await namespace(server)
    const created = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("job", { completionPolicy: null }) })
    expect(created.json.spec).toEqual({
      image: "nginx:1.25",
      parallelism: 1,
      completionPolicy: { type: "Always" },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 }
    })
    const patched = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { spec: { pullPolicy: null, imagePullPolicy: null } }
    })
    expect(patched.json.spec.pullPolicy).toEqual({ timeoutSeconds: 600, backoffLimit: 3 })
    // Not defaulted (issue 26): unset, the deprecated pullPolicy.type is read, else IfNotPresent.
    expect(patched.json.spec).not.toHaveProperty("imagePullPolicy")
    const node = await request(server, nodeImagePath, {
      method: "POST",
      body: {
        apiVersion: kruise,
        kind: "NodeImage",
        metadata: { name: unique("node") },
        spec: { images: { ubuntu: { tags: [{ tag: "latest" }] } } }
      }
    })
    expect(node.json.spec.images.ubuntu.tags).toEqual([{ tag: "latest", version: 0, imagePullPolicy: "IfNotPresent" }])
  })

  it("dryRun=All validates and answers without storing", async () => {
    const ns = await namespace(server)
    const dry = await request(server, `${ipjPath(ns)}?dryRun=All`, { method: "POST", body: imagePullJob("dry") })
    expect(dry.status).toBe(201)
    expect(dry.json.spec.parallelism).toBe(1)
    expect((await request(server, ipjPath(ns, "dry"))).status).toBe(404)
    const bad = await request(server, `${ipjPath(ns)}?dryRun=All`, { method: "POST", body: imagePullJob("dry", { parallelism: -1 }) })
    expect(bad.status).toBe(422)
  })
})

describe("decoder admission (opt-in): the controller's own validation, as a webhook", () => {
  it("rejects what the CRD rules cannot express, with the SPEC messages", async () => {
    const strict = await startServer({ decoderAdmission: true })
    try {
      // A tag that makes no image reference: upstream's webhook lets it through, the decoder names it.
      const nodeImage = (name: string, tag: string) => ({
        apiVersion: kruise,
        kind: "NodeImage",
        metadata: { name },
        spec: { images: { nginx: { tags: [{ tag }] } } }
      })
      const answer = await request(strict, nodeImagePath, { method: "POST", body: nodeImage("bad", "Bad Tag!") })
      expect(answer.status).toBe(422)
      expect(answer.json.message).toMatch(
        /^admission webhook "validate\.preheat\.apps\.kruise\.io" denied the request: NodeImage\.apps\.kruise\.io "bad" is invalid: spec\.images\.nginx\.tags\[0\]\.tag: Invalid value: invalid image "nginx:Bad Tag!": /
      )
      const fine = await request(strict, ipjPath("default"), { method: "POST", body: imagePullJob("fine") })
      expect(fine.status).toBe(201)
      // Without the option the server accepts what the CRD accepts, as a real cluster does.
      expect((await request(server, nodeImagePath, { method: "POST", body: nodeImage(unique("tags"), "Bad Tag!") })).status).toBe(201)
    } finally {
      await strict.close()
    }
  })
})
