import { type Schema, SchemaAST } from "effect"
import { stringify } from "yaml"
import { AdvancedCronJob } from "../advancedCronJob.ts"
import { ImageListPullJob } from "../imageListPullJob.ts"
import { ImagePullJob } from "../imagePullJob.ts"
import { group } from "../meta.ts"
import { NodeImage } from "../nodeImage.ts"
import { storageVersion } from "../references.ts"
import { apiVersions, openApiKey } from "../schemaExtras.ts"
import type { ApiVersionName, OpenApiExtras } from "../schemaExtras.ts"
import { hasDefault, toOpenApi } from "./openApi.ts"

interface PrinterColumn {
  readonly name: string
  readonly type: "integer" | "string" | "date"
  readonly jsonPath: string
  readonly description: string
  readonly priority?: number
}

interface KindDefinition {
  readonly kind: string
  readonly plural: string
  readonly shortNames: ReadonlyArray<string>
  readonly scope: "Namespaced" | "Cluster"
  readonly schema: Schema.Top
  readonly columns: ReadonlyArray<PrinterColumn>
}

const count = (name: string, field: string, description: string, priority?: number): PrinterColumn => ({
  name,
  type: "integer",
  jsonPath: `.status.${field}`,
  description,
  ...(priority === undefined ? {} : { priority })
})

const age: PrinterColumn = {
  name: "AGE",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
  description: "Time since the object was created."
}

export const kinds: ReadonlyArray<KindDefinition> = [
  {
    kind: "ImagePullJob",
    plural: "imagepulljobs",
    shortNames: ["ipj"],
    scope: "Namespaced",
    schema: ImagePullJob,
    columns: [
      count("TOTAL", "desired", "Number of nodes to pull on."),
      count("ACTIVE", "active", "Number of nodes pulling now."),
      count("SUCCEED", "succeeded", "Number of nodes that pulled the image."),
      count("FAILED", "failed", "Number of nodes that failed."),
      age,
      { name: "MESSAGE", type: "string", jsonPath: ".status.message", description: "Progress in words." }
    ]
  },
  {
    kind: "ImageListPullJob",
    plural: "imagelistpulljobs",
    shortNames: ["iplj"],
    scope: "Namespaced",
    schema: ImageListPullJob,
    columns: [
      count("TOTAL", "desired", "Number of images."),
      count("SUCCEEDED", "succeeded", "Number of images pulled on every node."),
      count("COMPLETED", "completed", "Number of images whose job completed."),
      age
    ]
  },
  {
    kind: "NodeImage",
    plural: "nodeimages",
    shortNames: ["ni"],
    scope: "Cluster",
    schema: NodeImage,
    columns: [
      count("DESIRED", "desired", "Number of tags to pull."),
      count("PULLING", "pulling", "Number of tags being pulled."),
      count("WAITING", "waiting", "Number of tags waiting for a pull slot.", 1),
      count("SUCCEED", "succeeded", "Number of tags pulled."),
      count("FAILED", "failed", "Number of tags that failed."),
      age
    ]
  },
  {
    kind: "AdvancedCronJob",
    plural: "advancedcronjobs",
    shortNames: ["acj"],
    scope: "Namespaced",
    schema: AdvancedCronJob,
    columns: [
      { name: "Schedule", type: "string", jsonPath: ".spec.schedule", description: "The schedule of advanced cron job." },
      { name: "Type", type: "string", jsonPath: ".status.type", description: "Type of cron job." },
      {
        name: "LastScheduleTime",
        type: "date",
        jsonPath: ".status.lastScheduleTime",
        description: "The last time at which job was scheduled."
      },
      age
    ]
  }
]

const envelope = {
  apiVersion: {
    description: "APIVersion defines the versioned schema of this representation of an object.",
    type: "string"
  },
  kind: { description: "Kind is a string value representing the REST resource this object represents.", type: "string" },
  metadata: { description: "Standard object metadata.", type: "object" }
}

/** The kind's spec and status from its Schema, in the envelope the API server itself validates. */
const rootSchema = (schema: Schema.Top, version: ApiVersionName) => {
  const ast = SchemaAST.toEncoded(schema.ast) as SchemaAST.Objects
  const own = ast.propertySignatures.filter((p) => !(String(p.name) in envelope))
  const required = own.filter((p) => !SchemaAST.isOptional(p.type) && !hasDefault(p.type)).map((p) => String(p.name))
  // Rules on the whole object (metadata.name, say), as kube-apiserver evaluates them at the root.
  const rules = (ast.annotations?.[openApiKey] as OpenApiExtras | undefined)?.["x-kubernetes-validations"]
  return {
    description: ast.annotations?.["description"],
    type: "object",
    properties: { ...envelope, ...Object.fromEntries(own.map((p) => [String(p.name), toOpenApi(p.type, String(p.name), version)])) },
    ...(required.length > 0 ? { required } : {}),
    ...(rules === undefined ? {} : { "x-kubernetes-validations": rules })
  }
}

const singular = (kind: string): string => kind.toLowerCase()

export const crdOf = (definition: KindDefinition) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: {
    name: `${definition.plural}.${group}`,
    labels: { "app.kubernetes.io/name": "preheat", "app.kubernetes.io/component": "crd" }
  },
  spec: {
    group,
    names: {
      kind: definition.kind,
      listKind: `${definition.kind}List`,
      plural: definition.plural,
      singular: singular(definition.kind),
      shortNames: definition.shortNames,
      categories: ["preheat"]
    },
    scope: definition.scope,
    // As upstream: every version served, the newest stored, and no conversion (the schemas
    // differ only by fields a version adds: none for AdvancedCronJob, see advancedCronJob.ts),
    // so the API server just rewrites apiVersion.
    versions: apiVersions.map((name) => ({
      name,
      served: true,
      storage: name === storageVersion,
      subresources: { status: {} },
      additionalPrinterColumns: definition.columns,
      schema: { openAPIV3Schema: rootSchema(definition.schema, name) }
    })),
    conversion: { strategy: "None" }
  }
})

export const crds = () => kinds.map(crdOf)

export const crdFileName = (definition: KindDefinition): string => `${group}_${definition.plural}.yaml`

export const renderCrd = (crd: ReturnType<typeof crdOf>): string => stringify(crd, { lineWidth: 0 })

/** All of them as one multi-document stream, ready for `kubectl apply -f -`. */
export const renderCrds = (): string => crds().map(renderCrd).join("---\n")
