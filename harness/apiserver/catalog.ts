// The kinds this API server serves, with everything discovery, OpenAPI, tables, admission and
// patches need to know about each: the built-in kinds the controller and the daemon use, and the
// custom resources from the CRDs generated out of the project's Schemas.
import { crds } from "../../src/api/crd/manifests.ts"
import { resources } from "../../src/kube/resources.ts"
import type { Resource } from "../../src/kube/resources.ts"
import { controllerRevisionTable, daemonSetTable, deploymentTable, replicaSetTable, statefulSetTable } from "./tables/appsTables.ts"
import {
  configMapTable,
  definitionTable,
  eventTable,
  leaseTable,
  namespaceTable,
  nodeTable,
  podTable,
  secretTable
} from "./tables/coreTables.ts"
import { customResourceDefinitions, groupOf, hasStatusSubresource, versionOf } from "./kindRules.ts"
import { printerColumnTable } from "./tables/printerColumns.ts"
import type { StructuralSchema } from "./admission/structuralSchema.ts"
import type { TableConvertor } from "./tables/table.ts"

/** Strategic merge patch knowledge: list fields merged by a key (or as sets of primitives). */
export type MergeKeys = Readonly<Record<string, string>>

export interface ServedKind {
  readonly resource: Resource
  readonly group: string
  readonly version: string
  readonly singular: string
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly statusSubresource: boolean
  readonly table: TableConvertor
  /** The kind's OpenAPI v3 schema under /openapi/v3 (without its group-version-kind extension). */
  readonly openApiSchema: Readonly<Record<string, unknown>>
  /** Custom resources: the CRD's structural schema, which prunes, defaults and validates. */
  readonly structural?: StructuralSchema
  /**
   * Built-in kinds accept strategic merge patches (kubectl apply sends them): the list fields
   * merged by key, by dotted path without indices; a value "" marks a set of primitives.
   */
  readonly mergeKeys?: MergeKeys
}

export const listKind = (kind: ServedKind): string => `${kind.resource.kind}List`

// Every kind's metadata merges finalizers as a set and ownerReferences by uid.
const metadataMergeKeys: MergeKeys = { "metadata.finalizers": "", "metadata.ownerReferences": "uid" }

const containerKeys = (prefix: string): MergeKeys => ({
  [prefix]: "name",
  [`${prefix}.env`]: "name",
  [`${prefix}.ports`]: "containerPort",
  [`${prefix}.volumeMounts`]: "mountPath",
  [`${prefix}.volumeDevices`]: "devicePath"
})

const preserved = (description: string) => ({ description, type: "object", "x-kubernetes-preserve-unknown-fields": true })

// Built-in kinds are described only as far as `kubectl explain` and validation need.
const coreSchema = (description: string, fields: Readonly<Record<string, unknown>>) => ({
  description,
  type: "object",
  properties: {
    apiVersion: { description: "APIVersion defines the versioned schema of this representation of an object.", type: "string" },
    kind: { description: "Kind is a string value representing the REST resource this object represents.", type: "string" },
    metadata: {
      description: "Standard object's metadata.",
      allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }],
      default: {}
    },
    ...fields
  },
  "x-kubernetes-preserve-unknown-fields": true
})

const core = (
  resource: Resource,
  options: {
    readonly singular: string
    readonly shortNames?: ReadonlyArray<string>
    readonly categories?: ReadonlyArray<string>
    readonly table: TableConvertor
    readonly description: string
    readonly fields: Readonly<Record<string, unknown>>
    readonly mergeKeys?: MergeKeys
  }
): ServedKind => ({
  resource,
  group: groupOf(resource),
  version: versionOf(resource),
  singular: options.singular,
  shortNames: options.shortNames ?? [],
  categories: options.categories ?? [],
  statusSubresource: hasStatusSubresource(resource),
  table: options.table,
  openApiSchema: coreSchema(options.description, options.fields),
  mergeKeys: { ...metadataMergeKeys, ...options.mergeKeys }
})

// A pod spec's list fields merged by key, under `prefix` (`spec` of a Pod, `spec.template.spec` of a workload).
const podSpecKeys = (prefix: string): MergeKeys => ({
  ...containerKeys(`${prefix}.containers`),
  ...containerKeys(`${prefix}.initContainers`),
  ...containerKeys(`${prefix}.ephemeralContainers`),
  [`${prefix}.volumes`]: "name",
  [`${prefix}.imagePullSecrets`]: "name",
  [`${prefix}.hostAliases`]: "ip"
})

// The apps/v1 workloads (listed before coordination.k8s.io, as kube-apiserver orders its groups): a pod template under spec.template, status through /status.
const workload = (resource: Resource, singular: string, shortName: string, table: TableConvertor, description: string): ServedKind =>
  core(resource, {
    singular,
    shortNames: [shortName],
    categories: ["all"],
    table,
    description,
    fields: {
      spec: preserved(`Specification of the desired behavior of the ${resource.kind}.`),
      status: preserved(`Most recently observed status of the ${resource.kind}.`)
    },
    mergeKeys: { ...podSpecKeys("spec.template.spec"), "status.conditions": "type" }
  })

const coreKinds: ReadonlyArray<ServedKind> = [
  core(resources.namespace, {
    singular: "namespace",
    shortNames: ["ns"],
    table: namespaceTable,
    description: "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
    fields: {
      spec: preserved("Spec defines the behavior of the Namespace."),
      status: preserved("Status describes the current status of a Namespace.")
    },
    mergeKeys: { "status.conditions": "type" }
  }),
  core(resources.node, {
    singular: "node",
    shortNames: ["no"],
    table: nodeTable,
    description: "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).",
    fields: {
      spec: preserved("Spec defines the behavior of a node."),
      status: preserved("Most recently observed status of the node.")
    },
    mergeKeys: { "spec.podCIDRs": "", "status.conditions": "type", "status.addresses": "type" }
  }),
  core(resources.pod, {
    singular: "pod",
    shortNames: ["po"],
    categories: ["all"],
    table: podTable,
    description: "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.",
    fields: {
      spec: preserved("Specification of the desired behavior of the pod."),
      status: preserved("Most recently observed status of the pod.")
    },
    mergeKeys: {
      ...podSpecKeys("spec"),
      "status.conditions": "type",
      "status.podIPs": "ip"
    }
  }),
  core(resources.secret, {
    singular: "secret",
    table: secretTable,
    description:
      "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
    fields: {
      data: {
        description: "Data contains the secret data, base64 encoded.",
        type: "object",
        additionalProperties: { type: "string", format: "byte" }
      },
      stringData: {
        description: "stringData allows specifying non-binary secret data in string form.",
        type: "object",
        additionalProperties: { type: "string" }
      },
      type: { description: "Used to facilitate programmatic handling of secret data.", type: "string" },
      immutable: { description: "Immutable, if set to true, ensures that data stored in the Secret cannot be updated.", type: "boolean" }
    }
  }),
  core(resources.configMap, {
    singular: "configmap",
    shortNames: ["cm"],
    table: configMapTable,
    description: "ConfigMap holds configuration data for pods to consume.",
    fields: {
      data: { description: "Data contains the configuration data.", type: "object", additionalProperties: { type: "string" } },
      binaryData: {
        description: "BinaryData contains the binary data.",
        type: "object",
        additionalProperties: { type: "string", format: "byte" }
      },
      immutable: { description: "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated.", type: "boolean" }
    }
  }),
  core(resources.event, {
    singular: "event",
    shortNames: ["ev"],
    table: eventTable,
    description: "Event is a report of an event somewhere in the cluster.",
    fields: {
      involvedObject: preserved("The object that this event is about."),
      reason: {
        description:
          "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        type: "string"
      },
      message: { description: "A human-readable description of the status of this operation.", type: "string" },
      type: { description: "Type of this event (Normal, Warning), new types could be added in the future", type: "string" }
    }
  }),
  workload(
    resources.deployment,
    "deployment",
    "deploy",
    deploymentTable,
    "Deployment enables declarative updates for Pods and ReplicaSets."
  ),
  workload(
    resources.statefulSet,
    "statefulset",
    "sts",
    statefulSetTable,
    "StatefulSet represents a set of pods with consistent identities."
  ),
  workload(resources.daemonSet, "daemonset", "ds", daemonSetTable, "DaemonSet represents the configuration of a daemon set."),
  workload(
    resources.replicaSet,
    "replicaset",
    "rs",
    replicaSetTable,
    "ReplicaSet ensures that a specified number of pod replicas are running at any given time."
  ),
  core(resources.controllerRevision, {
    singular: "controllerrevision",
    table: controllerRevisionTable,
    description: "ControllerRevision implements an immutable snapshot of state data.",
    fields: {
      data: preserved("Data is the serialized representation of the state."),
      revision: { description: "Revision indicates the revision of the state represented by Data.", type: "integer", format: "int64" }
    }
  }),
  // apiextensions.k8s.io before coordination.k8s.io, as kube-apiserver orders its groups.
  core(customResourceDefinitions, {
    singular: "customresourcedefinition",
    shortNames: ["crd", "crds"],
    categories: ["api-extensions"],
    table: definitionTable,
    description:
      "CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.",
    fields: {
      spec: preserved("spec describes how the user wants the resources to appear"),
      status: preserved("status indicates the actual state of the CustomResourceDefinition")
    }
  }),
  core(resources.lease, {
    singular: "lease",
    table: leaseTable,
    description: "Lease defines a lease concept.",
    fields: { spec: preserved("spec contains the specification of the Lease.") }
  })
]

// Every served version of each CRD, the newest first: discovery then prefers it, as kube-apiserver
// sorts versions. All versions of a kind share one storage (see storedApiVersion).
const customKinds: ReadonlyArray<ServedKind> = crds().flatMap((crd) =>
  [...crd.spec.versions]
    .reverse()
    .filter((version) => version.served)
    .map((version): ServedKind => {
      const names = crd.spec.names
      const resource: Resource = {
        apiVersion: `${crd.spec.group}/${version.name}`,
        kind: names.kind,
        plural: names.plural,
        namespaced: crd.spec.scope === "Namespaced"
      }
      const schema = version.schema.openAPIV3Schema as Record<string, unknown>
      const properties = schema["properties"] as Record<string, unknown>
      return {
        resource,
        group: crd.spec.group,
        version: version.name,
        singular: names.singular,
        shortNames: names.shortNames,
        categories: names.categories,
        statusSubresource: version.subresources.status !== undefined,
        table: printerColumnTable(version.additionalPrinterColumns),
        // As the real server publishes a CRD: metadata refers to ObjectMeta.
        openApiSchema: {
          ...schema,
          properties: {
            ...properties,
            metadata: {
              description: "Standard object's metadata.",
              allOf: [{ $ref: "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }]
            }
          }
        },
        structural: schema as StructuralSchema
      }
    })
)

export const servedKinds: ReadonlyArray<ServedKind> = [...coreKinds, ...customKinds]

/** The kind served at /api/v1/<plural> or /apis/<group>/<version>/<plural>. */
export const findKind = (group: string, version: string, plural: string): ServedKind | undefined =>
  servedKinds.find((k) => k.group === group && k.version === version && k.resource.plural === plural)

const byResource: ReadonlyMap<string, ServedKind> = new Map(
  servedKinds.map((kind) => [`${kind.resource.apiVersion}/${kind.resource.plural}`, kind])
)

/** The kind served for a resource, in the version it names. */
export const servedKindOf = (resource: Resource): ServedKind | undefined => byResource.get(`${resource.apiVersion}/${resource.plural}`)

export const isCustom = (kind: ServedKind): boolean => kind.structural !== undefined

/** The served group versions, core ("") first, each with its kinds. */
export const groupVersions = (): ReadonlyArray<{
  readonly group: string
  readonly version: string
  readonly kinds: ReadonlyArray<ServedKind>
}> => {
  const out: Array<{ group: string; version: string; kinds: Array<ServedKind> }> = []
  for (const kind of servedKinds) {
    let entry = out.find((e) => e.group === kind.group && e.version === kind.version)
    if (entry === undefined) out.push((entry = { group: kind.group, version: kind.version, kinds: [] }))
    entry.kinds.push(kind)
  }
  return out
}
