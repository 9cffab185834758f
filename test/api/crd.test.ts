import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { crdFileName, crdOf, kinds, renderCrd } from "../../src/api/crd/manifests.ts"
import { preheatKinds, storageVersion } from "../../src/api/references.ts"
import { resources } from "../../src/kube/resources.ts"
import { decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../src/api/decode.ts"
import type { InvalidObject } from "../../src/api/invalidObject.ts"
import { ImageListPullJob } from "../../src/api/imageListPullJob.ts"
import { ImagePullJob } from "../../src/api/imagePullJob.ts"
import { NodeImage } from "../../src/api/nodeImage.ts"
import { maxInt32, maxInt64 } from "../../src/api/schemaExtras.ts"
import { celViolations } from "../../harness/apiserver/admission/celRules.ts"
import { applyDefaults } from "../../harness/apiserver/admission/structuralSchema.ts"
import type { StructuralSchema } from "../../harness/apiserver/admission/structuralSchema.ts"

type Node = Record<string, unknown>
const rootSchema = (kind: string): Node => {
  const definition = kinds.find((k) => k.kind === kind)!
  return crdOf(definition).spec.versions[0]!.schema.openAPIV3Schema as Node
}

/** Every node of a schema with its path, for the structural checks. */
const walk = (node: Node, path: string, visit: (node: Node, path: string) => void): void => {
  visit(node, path)
  for (const [key, child] of Object.entries((node["properties"] ?? {}) as Record<string, Node>)) {
    walk(child, `${path}.${key}`, visit)
  }
  if (node["items"]) walk(node["items"] as Node, `${path}[]`, visit)
  if (node["additionalProperties"]) walk(node["additionalProperties"] as Node, `${path}[*]`, visit)
}

describe("generated CRDs", () => {
  it.each(kinds.map((k) => [k.kind, k] as const))("deploy/crds holds the generator's %s", (_, definition) => {
    const committed = readFileSync(join(import.meta.dirname, "../../deploy/crds", crdFileName(definition)), "utf8")
    expect(committed, "deploy/crds is stale: run npm run crds").toBe(renderCrd(crdOf(definition)))
  })

  it.each(kinds.map((k) => [k.kind]))("%s is structural and explained field by field", (kind) => {
    walk(rootSchema(kind), "", (node, path) => {
      const typed = typeof node["type"] === "string" || node["x-kubernetes-int-or-string"] === true
      expect(typed, `${path} has no type`).toBe(true)
      for (const forbidden of ["$ref", "anyOf", "oneOf", "allOf", "not", "examples", "additionalItems"]) {
        expect(node[forbidden], `${path} uses ${forbidden}`).toBeUndefined()
      }
      for (const [key, child] of Object.entries((node["properties"] ?? {}) as Record<string, Node>)) {
        expect(typeof child["description"], `${path}.${key} has no description`).toBe("string")
      }
      if (node["properties"] && node["additionalProperties"]) throw new Error(`${path}: properties and additionalProperties`)
    })
  })

  it("names, scopes, short names, status subresource and printer columns", () => {
    const byKind = Object.fromEntries(kinds.map((k) => [k.kind, crdOf(k).spec]))
    expect(byKind["ImagePullJob"]!.scope).toBe("Namespaced")
    expect(byKind["ImageListPullJob"]!.scope).toBe("Namespaced")
    expect(byKind["NodeImage"]!.scope).toBe("Cluster")
    expect(kinds.map((k) => crdOf(k).spec.names.shortNames)).toEqual([["ipj"], ["iplj"], ["ni"], ["acj"]])
    for (const k of kinds) expect(crdOf(k).spec.versions[0]!.subresources).toEqual({ status: {} })
    const columns = (kind: string) => byKind[kind]!.versions[0]!.additionalPrinterColumns.filter((c) => !c.priority).map((c) => c.name)
    expect(columns("ImagePullJob")).toEqual(["TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"])
    expect(columns("ImageListPullJob")).toEqual(["TOTAL", "SUCCEEDED", "COMPLETED", "AGE"])
    expect(columns("NodeImage")).toEqual(["DESIRED", "PULLING", "SUCCEED", "FAILED", "AGE"])
    // As upstream's CRD (kubebuilder printcolumns of advancedcronjob_types.go).
    expect(columns("AdvancedCronJob")).toEqual(["Schedule", "Type", "LastScheduleTime", "AGE"])
  })

  // Issue 26: the seed's spelling, in both versions of both job kinds (and the cron job's template).
  it.each(imageKinds.filter((k) => k.kind !== "NodeImage").map((k) => [k.kind, k] as const))(
    "%s: spec.pullPolicy.type, Always or IfNotPresent, described as deprecated in every version; imagePullPolicy has no default",
    (_, definition) => {
      for (const version of crdOf(definition).spec.versions) {
        const spec = ((version.schema.openAPIV3Schema as Node)["properties"] as Record<string, Node>)["spec"]!
        const fields = spec["properties"] as Record<string, Node>
        const type = (fields["pullPolicy"]!["properties"] as Record<string, Node>)["type"]!
        expect(type["enum"], version.name).toEqual(["Always", "IfNotPresent"])
        expect(type["description"], version.name).toMatch(/^Deprecated: use spec\.imagePullPolicy\./)
        expect(fields["imagePullPolicy"]!["default"], version.name).toBeUndefined()
      }
    }
  )

  it("parse as the YAML documents kubectl reads", () => {
    for (const k of kinds) expect(parse(renderCrd(crdOf(k)))).toEqual(crdOf(k))
  })
})

describe("the API server's defaults equal the decoder's", () => {
  const cases: ReadonlyArray<[string, Schema.Top, unknown]> = [
    ["ImagePullJob", ImagePullJob, { metadata: { name: "a" }, spec: { image: "nginx", completionPolicy: {} } }],
    ["ImagePullJob", ImagePullJob, { metadata: { name: "a" }, spec: { image: "nginx", pullPolicy: { backoffLimit: 0 } } }],
    ["ImagePullJob", ImagePullJob, { metadata: { name: "a" }, spec: { image: "nginx", pullPolicy: { type: "Always" } } }],
    ["ImageListPullJob", ImageListPullJob, { metadata: { name: "a" }, spec: { images: ["a", "b"] } }],
    ["NodeImage", NodeImage, { metadata: { name: "n" }, spec: { images: { ubuntu: { tags: [{ tag: "latest" }] } } } }],
    ["NodeImage", NodeImage, { metadata: { name: "n" } }]
  ]
  it.each(cases)("%s", (kind, schema, input) => {
    const decoded = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(
      Schema.decodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(input)
    )
    expect(applyDefaults(rootSchema(kind) as StructuralSchema, input)).toEqual(decoded)
  })
})

/**
 * The CRD's CEL rules and the controller's validation must agree: for every invalid object the
 * rules reject, the decoder reports the same message, and valid objects pass both.
 */
describe("CEL rules agree with the controller's validation", () => {
  const decoders = { ImagePullJob: decodeImagePullJob, ImageListPullJob: decodeImageListPullJob, NodeImage: decodeNodeImage }
  type Kind = keyof typeof decoders

  const celMessages = (kind: Kind, input: unknown): ReadonlyArray<string> =>
    celViolations(rootSchema(kind) as StructuralSchema, applyDefaults(rootSchema(kind) as StructuralSchema, input)).map((v) => v.message)
  const decoderMessages = (kind: Kind, input: unknown): ReadonlyArray<string> => {
    const result: Result.Result<unknown, InvalidObject> = decoders[kind](input)
    return Result.isFailure(result) ? result.failure.errors.map((e) => e.message) : []
  }

  const job = (spec: unknown) => ({ metadata: { name: "j" }, spec })
  const invalid: ReadonlyArray<[Kind, string, unknown]> = [
    [
      "ImagePullJob",
      "can not set both names and labelSelector in this spec.selector",
      job({ image: "a", selector: { names: ["n"], matchLabels: { a: "b" } } })
    ],
    ["ImagePullJob", "duplicated name in selector names", job({ image: "a", selector: { names: ["n", "n"] } })],
    ["ImagePullJob", "can not set both selector and podSelector", job({ image: "a", selector: {}, podSelector: {} })],
    ["ImagePullJob", 'invalid image "Nginx:1": repository name must be lowercase', job({ image: "Nginx:1" })],
    ["ImagePullJob", "image can not be empty", job({ image: "" })],
    ["ImagePullJob", 'unknown type of completionPolicy: "Sometimes"', job({ image: "a", completionPolicy: { type: "Sometimes" } })],
    [
      "ImagePullJob",
      "invalid selector: matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      job({
        image: "a",
        selector: {
          matchExpressions: [
            { key: "a", operator: "Exists" },
            { key: "b", operator: "In" }
          ]
        }
      })
    ],
    [
      "ImagePullJob",
      "invalid podSelector: matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      job({ image: "a", podSelector: { matchExpressions: [{ key: "a", operator: "DoesNotExist", values: ["x"] }] } })
    ],
    [
      "ImageListPullJob",
      'invalid selector: matchExpressions[0].operator: Unsupported value: "Is": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
      job({ images: ["a"], selector: { matchExpressions: [{ key: "a", operator: "Is", values: ["x"] }] } })
    ],
    [
      "ImagePullJob",
      "invalid selector: matchLabels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', " +
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation " +
        "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      job({ image: "a", selector: { matchLabels: { "bad key!": "x" } } })
    ],
    [
      "ImageListPullJob",
      'invalid podSelector: matchExpressions[0].key: Invalid value: "/app": prefix part must be non-empty',
      job({ images: ["a"], podSelector: { matchExpressions: [{ key: "/app", operator: "Exists" }] } })
    ],
    [
      "ImagePullJob",
      'invalid podSelector: matchExpressions[0].values[1]: Invalid value: "b c": a valid label must be an empty string or consist of ' +
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or " +
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      job({ image: "a", podSelector: { matchExpressions: [{ key: "a", operator: "In", values: ["b", "b c"] }] } })
    ],
    ["ImageListPullJob", 'invalid image "...": invalid reference format', job({ images: ["nginx", "..."] })],
    ["ImageListPullJob", "image can not be empty", job({ images: ["nginx", ""] })],
    [
      "ImagePullJob",
      "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
      job({ image: "a", completionPolicy: { type: "Never", ttlSecondsAfterFinished: 5 } })
    ],
    [
      "ImagePullJob",
      "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
      job({ image: "a", completionPolicy: { activeDeadlineSeconds: 100 } })
    ],
    [
      "ImagePullJob",
      "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
      job({ image: "a", completionPolicy: { activeDeadlineSeconds: 699 }, pullPolicy: { timeoutSeconds: 700 } })
    ],
    [
      "ImagePullJob",
      "parallelism must be a non-negative integer or a percentage from 0% to 100%",
      job({ image: "a", parallelism: "200%" })
    ],
    ["ImagePullJob", "parallelism must be a non-negative integer or a percentage from 0% to 100%", job({ image: "a", parallelism: -2 })],
    ["ImageListPullJob", "images cannot have duplicate values", job({ images: ["a", "b", "a"] })],
    // Issue 26: the seed's spelling, deprecated, may not contradict upstream's.
    [
      "ImagePullJob",
      "pullPolicy.type Always differs from imagePullPolicy IfNotPresent: pullPolicy.type is deprecated, set imagePullPolicy only",
      job({ image: "a", imagePullPolicy: "IfNotPresent", pullPolicy: { type: "Always" } })
    ],
    [
      "ImageListPullJob",
      "pullPolicy.type IfNotPresent differs from imagePullPolicy Always: pullPolicy.type is deprecated, set imagePullPolicy only",
      job({ images: ["a"], imagePullPolicy: "Always", pullPolicy: { type: "IfNotPresent", timeoutSeconds: 60 } })
    ],
    // Not in upstream's ImageListPullJob webhook: every ImagePullJob it created would be refused (issue 24).
    [
      "ImageListPullJob",
      "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
      job({ images: ["a"], completionPolicy: { activeDeadlineSeconds: 1 } })
    ],
    ["ImageListPullJob", "the maximum number of images cannot > 255", job({ images: Array.from({ length: 256 }, (_, i) => `i${i}`) })],
    ["ImageListPullJob", "can not set both selector and podSelector", job({ images: ["a"], selector: {}, podSelector: {} })],
    [
      "NodeImage",
      "spec images length 257 can not be more than 256",
      {
        metadata: { name: "n" },
        spec: { images: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`i${i}`, { tags: [{ tag: "t" }] }])) }
      }
    ],
    ["NodeImage", "image name can not be empty", { metadata: { name: "n" }, spec: { images: { "": { tags: [] } } } }],
    [
      "NodeImage",
      'tag for image "nginx" can not be empty',
      { metadata: { name: "n" }, spec: { images: { nginx: { tags: [{ tag: "" }] } } } }
    ],
    [
      "NodeImage",
      'duplicated tag "v1" for image "nginx"',
      { metadata: { name: "n" }, spec: { images: { busybox: { tags: [{ tag: "v1" }] }, nginx: { tags: [{ tag: "v1" }, { tag: "v1" }] } } } }
    ],
    [
      "NodeImage",
      'version for "nginx:v1" can not be less than 0',
      { metadata: { name: "n" }, spec: { images: { nginx: { tags: [{ tag: "v1", version: -1 }] } } } }
    ]
  ]

  it.each(invalid)("%s: %s", (kind, message, input) => {
    expect(celMessages(kind, input)).toContain(message)
    expect(decoderMessages(kind, input)).toContain(message)
  })

  const valid: ReadonlyArray<[Kind, unknown]> = [
    [
      "ImagePullJob",
      job({
        image: "nginx:1.9.1",
        parallelism: "100%",
        selector: { names: ["a", "b"] },
        completionPolicy: { activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
        pullPolicy: { timeoutSeconds: 300 }
      })
    ],
    ["ImagePullJob", job({ image: "nginx", completionPolicy: { type: "Never" }, podSelector: { matchLabels: { app: "x" } } })],
    ["ImagePullJob", job({ image: "nginx", selector: { matchLabels: { a: "b" } }, parallelism: 0 })],
    ["ImageListPullJob", job({ images: ["nginx:1.9.1", "busybox:1.29.2"], parallelism: 10 })],
    ["ImagePullJob", job({ image: "nginx", pullPolicy: { type: "Always" } })],
    ["ImageListPullJob", job({ images: ["nginx"], imagePullPolicy: "Always", pullPolicy: { type: "Always" } })],
    // Upstream refuses only a timeout above the deadline; its e2e jobs use 50/50.
    ["ImagePullJob", job({ image: "nginx", completionPolicy: { activeDeadlineSeconds: 50 }, pullPolicy: { timeoutSeconds: 50 } })],
    ["ImageListPullJob", job({ images: ["nginx"], completionPolicy: { activeDeadlineSeconds: 600 } })],
    ["ImagePullJob", job({ image: "nginx", parallelism: "4" })],
    [
      "ImagePullJob",
      job({
        image: "nginx",
        selector: {
          matchLabels: { "kubernetes.io/hostname": "n-1", tier: "" },
          matchExpressions: [{ key: "example.com/Zone_A", operator: "NotIn", values: ["a.b", "c_d"] }]
        }
      })
    ],
    ["NodeImage", { metadata: { name: "n" }, spec: { images: { ubuntu: { tags: [{ tag: "latest", version: 2 }, { tag: "22.04" }] } } } }]
  ]
  it.each(valid)("%s accepted by both", (kind, input) => {
    expect(celMessages(kind, input)).toEqual([])
    expect(decoderMessages(kind, input)).toEqual([])
  })
})

/** Every property path of a schema, for comparing versions. */
const paths = (root: Node): ReadonlyArray<string> => {
  const out: Array<string> = []
  walk(root, "", (_, path) => out.push(path))
  return out.sort()
}

const upstreamCrd = (definition: (typeof kinds)[number]): Node =>
  parse(readFileSync(join(import.meta.dirname, "../upstream", crdFileName(definition)), "utf8")) as Node

const imageKinds = kinds.filter((k) => k.kind !== "AdvancedCronJob")
const advancedCronJob = kinds.find((k) => k.kind === "AdvancedCronJob")!

describe("API versions as upstream's current CRDs", () => {
  it.each(kinds.map((k) => [k.kind, k] as const))("%s serves v1alpha1 and v1beta1, stores v1beta1, converts with None", (_, definition) => {
    const { spec } = crdOf(definition)
    expect(spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ["v1alpha1", true, false],
      ["v1beta1", true, true]
    ])
    expect(spec.conversion).toEqual({ strategy: "None" })
  })

  it("references name the kinds the CRDs define (references.ts is kept apart from the generator)", () => {
    expect([...preheatKinds].sort()).toEqual(kinds.map((k) => k.kind).sort())
  })

  it("the controller reads and writes AdvancedCronJob in the version it is stored in", () => {
    expect(resources.advancedCronJob.apiVersion).toBe(`apps.kruise.io/${storageVersion}`)
  })

  it.each(kinds.map((k) => [k.kind, k] as const))("%s: upstream's CRD serves and stores the same versions", (_, definition) => {
    const versions = (upstreamCrd(definition)["spec"] as Node)["versions"] as ReadonlyArray<Node>
    expect(versions.map((v) => [v["name"], v["served"], v["storage"]])).toEqual(
      crdOf(definition).spec.versions.map((v) => [v.name, v.served, v.storage])
    )
    expect((upstreamCrd(definition)["spec"] as Node)["conversion"]).toBeUndefined()
  })

  // The fields one version has and the other lacks, in upstream's CRD and in ours: the same.
  const versionDifference = (versions: ReadonlyArray<Node>) => {
    const [alpha, beta] = versions.map((v) => paths((v["schema"] as Node)["openAPIV3Schema"] as Node))
    return { onlyAlpha: alpha!.filter((p) => !beta!.includes(p)), onlyBeta: beta!.filter((p) => !alpha!.includes(p)) }
  }
  it.each(imageKinds.map((k) => [k.kind, k] as const))("%s: the versions differ as upstream's do", (_, definition) => {
    const upstream = versionDifference((upstreamCrd(definition)["spec"] as Node)["versions"] as ReadonlyArray<Node>)
    const ours = versionDifference(crdOf(definition).spec.versions as unknown as ReadonlyArray<Node>)
    expect(ours).toEqual(upstream)
  })

  // On purpose (advancedCronJob.ts): upstream's v1alpha1 lacks the ImageListPullJob template, so
  // conversion None drops it from v1alpha1 reads and writes; preheat's versions are one schema.
  it("AdvancedCronJob: upstream's v1beta1 alone has imageListPullJobTemplate; preheat has it in both", () => {
    const upstream = versionDifference((upstreamCrd(advancedCronJob)["spec"] as Node)["versions"] as ReadonlyArray<Node>)
    expect(upstream.onlyAlpha).toEqual([])
    expect(upstream.onlyBeta.length).toBeGreaterThan(0)
    expect(upstream.onlyBeta.filter((p) => !p.startsWith(".spec.template.imageListPullJobTemplate"))).toEqual([])
    expect(versionDifference(crdOf(advancedCronJob).spec.versions as unknown as ReadonlyArray<Node>)).toEqual({
      onlyAlpha: [],
      onlyBeta: []
    })
    // Every field of upstream's template is in preheat's, in both versions.
    for (const version of crdOf(advancedCronJob).spec.versions) {
      const ours = paths(version.schema.openAPIV3Schema as Node)
      expect(
        upstream.onlyBeta.filter((p) => !ours.includes(p)),
        version.name
      ).toEqual([])
    }
  })

  it("NodeImage v1beta1 alone has spec.images{}.pullSecrets[].mode", () => {
    const nodeImage = crdOf(kinds.find((k) => k.kind === "NodeImage")!)
    const [alpha, beta] = nodeImage.spec.versions.map((v) => paths(v.schema.openAPIV3Schema as Node))
    expect(beta!.filter((p) => !alpha!.includes(p))).toEqual([".spec.images[*].pullSecrets[].mode"])
  })
})

/** The structured-merge markers of a schema, by path, for the paths in `only`. */
const mergeMarkers = (root: Node, only: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  walk(root, "", (node, path) => {
    if (!only.includes(path)) return
    for (const key of ["x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"]) {
      if (node[key] !== undefined) out[`${path} ${key}`] = node[key]
    }
  })
  return out
}

describe("server-side apply's merge markers as upstream's CRDs", () => {
  it.each(kinds.map((k) => [k.kind, k] as const))("%s: list and map types of every field both CRDs have", (_, definition) => {
    const upstreamVersions = (upstreamCrd(definition)["spec"] as Node)["versions"] as ReadonlyArray<Node>
    for (const version of crdOf(definition).spec.versions) {
      const ours = version.schema.openAPIV3Schema as Node
      const theirs = (upstreamVersions.find((v) => v["name"] === version.name)!["schema"] as Node)["openAPIV3Schema"] as Node
      const shared = paths(ours).filter((p) => paths(theirs).includes(p))
      expect(mergeMarkers(ours, shared), version.name).toEqual(mergeMarkers(theirs, shared))
    }
  })

  it("selectors are atomic: replaced whole, as kubectl apply --server-side expects of a label selector", () => {
    const spec = (rootSchema("ImagePullJob")["properties"] as Record<string, Node>)["spec"]!
    const { selector, podSelector } = spec["properties"] as Record<string, Node>
    expect(selector!["x-kubernetes-map-type"]).toBe("atomic")
    expect(podSelector!["x-kubernetes-map-type"]).toBe("atomic")
  })
})

/** The integer nodes of a schema: their format and bounds, by path. */
const integers = (root: Node, only: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  walk(root, "", (node, path) => {
    if (only.includes(path) && node["type"] === "integer") out[path] = node["format"]
  })
  return out
}

// Issue 24: one bound per numeric field. kube-apiserver does not check `format: int32` ranges,
// so each bound is also a maximum (and minimum) the API server enforces.
describe("integer fields as upstream's Go types", () => {
  it.each(kinds.map((k) => [k.kind, k] as const))("%s: every integer both CRDs have has upstream's format", (_, definition) => {
    const upstreamVersions = (upstreamCrd(definition)["spec"] as Node)["versions"] as ReadonlyArray<Node>
    for (const version of crdOf(definition).spec.versions) {
      const ours = version.schema.openAPIV3Schema as Node
      const theirs = (upstreamVersions.find((v) => v["name"] === version.name)!["schema"] as Node)["openAPIV3Schema"] as Node
      const shared = paths(ours).filter((p) => paths(theirs).includes(p) && !p.startsWith(".metadata"))
      expect(integers(ours, shared), version.name).toEqual(integers(theirs, shared))
    }
  })

  it.each(kinds.map((k) => [k.kind]))("%s: every integer is bounded by its format", (kind) => {
    walk(rootSchema(kind), "", (node, path) => {
      if (node["type"] !== "integer") return
      const format = node["format"]
      expect(format, `${path} has no format`).toMatch(/^int(32|64)$/)
      expect(node["maximum"], `${path} has no maximum`).toBeTypeOf("number")
      expect(node["maximum"] as number, path).toBeLessThanOrEqual(format === "int32" ? maxInt32 : maxInt64)
      expect(node["minimum"] as number, `${path} has no minimum`).toBeGreaterThanOrEqual(format === "int32" ? -maxInt32 - 1 : -maxInt64)
    })
  })
})
