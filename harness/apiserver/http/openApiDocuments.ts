// /openapi/v3: the root listing one document per group version, and those documents. kubectl
// reads them to decide how to patch and whether the server validates fields itself: a `patch`
// operation on `.../{name}` carrying the kind's x-kubernetes-group-version-kind and a
// `fieldValidation` parameter makes `kubectl apply` send fieldValidation=Strict and leave
// validation to this server. `kubectl explain` reads the kinds' schemas from the same documents.
import { createHash } from "node:crypto"
import type { ServedKind } from "../catalog.ts"
import { groupVersions, isCustom, listKind } from "../catalog.ts"
import { kubernetesVersion } from "./serverVersion.ts"

const meta = "io.k8s.apimachinery.pkg.apis.meta.v1"
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** `io.k8s.api.core.v1.Pod`, `io.kruise.apps.v1alpha1.ImagePullJob`: the names kube-apiserver gives. */
const schemaName = (kind: ServedKind, name = kind.resource.kind): string => {
  if (isCustom(kind)) return `${kind.group.split(".").reverse().join(".")}.${kind.version}.${name}`
  const group = kind.group === "" ? "core" : kind.group.replace(/\.k8s\.io$/, "")
  return `io.k8s.api.${group}.${kind.version}.${name}`
}

const string = (description: string) => ({ description, type: "string" })
const stringMap = (description: string) => ({ description, type: "object", additionalProperties: { type: "string", default: "" } })

const sharedSchemas = {
  [`${meta}.ObjectMeta`]: {
    description: "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
    type: "object",
    properties: {
      name: string("Name must be unique within a namespace."),
      generateName: string(
        "GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."
      ),
      namespace: string("Namespace defines the space within which each name must be unique."),
      uid: string("UID is the unique in time and space value for this object."),
      resourceVersion: string("An opaque value that represents the internal version of this object."),
      generation: {
        description: "A sequence number representing a specific generation of the desired state.",
        type: "integer",
        format: "int64"
      },
      creationTimestamp: {
        description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
        type: "string",
        format: "date-time"
      },
      deletionTimestamp: {
        description: "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted.",
        type: "string",
        format: "date-time"
      },
      deletionGracePeriodSeconds: {
        description: "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system.",
        type: "integer",
        format: "int64"
      },
      labels: stringMap("Map of string keys and values that can be used to organize and categorize (scope and select) objects."),
      annotations: stringMap(
        "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."
      ),
      finalizers: {
        description: "Must be empty before the object is deleted from the registry.",
        type: "array",
        items: { type: "string", default: "" },
        "x-kubernetes-patch-strategy": "merge"
      },
      ownerReferences: {
        description: "List of objects depended by this object.",
        type: "array",
        items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        "x-kubernetes-patch-merge-key": "uid",
        "x-kubernetes-patch-strategy": "merge"
      }
    }
  },
  [`${meta}.ListMeta`]: {
    description: "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.",
    type: "object",
    properties: {
      resourceVersion: string("String that identifies the server's internal version of this object."),
      continue: string("continue may be set if the user set a limit on the number of items returned."),
      remainingItemCount: {
        description: "The number of subsequent items in the list which are not included in this list response.",
        type: "integer",
        format: "int64"
      }
    }
  },
  [`${meta}.Patch`]: {
    description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
    type: "object"
  },
  [`${meta}.DeleteOptions`]: {
    description: "DeleteOptions may be provided when deleting an API object.",
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true
  },
  [`${meta}.Status`]: {
    description: "Status is a return value for calls that don't return other objects.",
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true
  }
}

const queryParameter = (name: string, description: string, type = "string") => ({
  name,
  in: "query",
  description,
  schema: { type, uniqueItems: true }
})

const parameters = {
  dryRun: queryParameter("dryRun", "When present, indicates that modifications should not be persisted."),
  fieldManager: queryParameter("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."),
  fieldValidation: queryParameter(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (default) and Strict."
  ),
  force: queryParameter("force", 'Force is going to "force" Apply requests.', "boolean"),
  labelSelector: queryParameter("labelSelector", "A selector to restrict the list of returned objects by their labels."),
  fieldSelector: queryParameter("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
  limit: queryParameter("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
  continue: queryParameter("continue", "The continue option should be set when retrieving more results from the server."),
  resourceVersion: queryParameter(
    "resourceVersion",
    "resourceVersion sets a constraint on what resource versions a request may be served from."
  ),
  timeoutSeconds: queryParameter("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
  watch: queryParameter(
    "watch",
    "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
    "boolean"
  ),
  allowWatchBookmarks: queryParameter("allowWatchBookmarks", 'allowWatchBookmarks requests watch events with type "BOOKMARK".', "boolean")
}

// Strategic merge (built-in kinds only) is accepted but not advertised: kubectl then computes it
// from its own complete knowledge of the built-in types, which this server's merge keys follow,
// instead of from the schemas here, which describe those types only in part.
const patchTypes = ["application/json-patch+json", "application/merge-patch+json"]

const pathParameter = (name: string, description: string) => ({
  name,
  in: "path",
  description,
  required: true,
  schema: { type: "string", uniqueItems: true }
})

const json = (schema: unknown) => ({ "application/json": { schema }, "application/yaml": { schema } })

const operations = (kind: ServedKind, path: "collection" | "item" | "status" | "allNamespaces") => {
  const gvk = { group: kind.group, version: kind.version, kind: kind.resource.kind }
  const object = ref(schemaName(kind))
  const list = ref(schemaName(kind, listKind(kind)))
  const id = (verb: string) => `${verb}${kind.resource.kind}${path === "status" ? "Status" : ""}`
  const op = (action: string, verb: string, extra: Record<string, unknown>, response: unknown) => ({
    tags: [kind.group === "" ? "core_v1" : `${kind.group}_${kind.version}`],
    description: `${verb} ${kind.resource.kind}`,
    operationId: id(verb),
    ...extra,
    responses: { "200": { description: "OK", content: json(response) }, "401": { description: "Unauthorized" } },
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk
  })
  const write = [parameters.dryRun, parameters.fieldManager, parameters.fieldValidation]
  const body = (schema: unknown) => ({ requestBody: { content: { "*/*": { schema } }, required: true } })
  const listing = [
    parameters.labelSelector,
    parameters.fieldSelector,
    parameters.limit,
    parameters.continue,
    parameters.resourceVersion,
    parameters.timeoutSeconds,
    parameters.watch,
    parameters.allowWatchBookmarks
  ]
  const patch = op(
    "patch",
    "patch",
    {
      parameters: [...write, parameters.force],
      requestBody: { content: Object.fromEntries(patchTypes.map((t) => [t, { schema: ref(`${meta}.Patch`) }])), required: true }
    },
    object
  )
  switch (path) {
    case "allNamespaces":
      return { get: op("list", "list", { parameters: listing }, list) }
    case "collection":
      return {
        get: op("list", "list", { parameters: listing }, list),
        post: op("post", "create", { parameters: write, ...body(object) }, object),
        delete: op("deletecollection", "deletecollection", { parameters: listing }, ref(`${meta}.Status`))
      }
    case "item":
      return {
        get: op("get", "read", {}, object),
        put: op("put", "replace", { parameters: write, ...body(object) }, object),
        patch,
        delete: op("delete", "delete", { parameters: [parameters.dryRun], ...body(ref(`${meta}.DeleteOptions`)) }, object)
      }
    case "status":
      return { get: op("get", "read", {}, object), put: op("put", "replace", { parameters: write, ...body(object) }, object), patch }
  }
}

const pathsOf = (kind: ServedKind) => {
  const base = kind.group === "" ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`
  const plural = kind.resource.plural
  const name = pathParameter("name", `name of the ${kind.resource.kind}`)
  const namespace = pathParameter("namespace", "object name and auth scope, such as for teams and projects")
  const scope = kind.resource.namespaced ? `${base}/namespaces/{namespace}/${plural}` : `${base}/${plural}`
  const scoped = kind.resource.namespaced ? [namespace] : []
  return {
    ...(kind.resource.namespaced ? { [`${base}/${plural}`]: operations(kind, "allNamespaces") } : {}),
    [scope]: { ...operations(kind, "collection"), parameters: scoped },
    [`${scope}/{name}`]: { ...operations(kind, "item"), parameters: [name, ...scoped] },
    ...(kind.statusSubresource ? { [`${scope}/{name}/status`]: { ...operations(kind, "status"), parameters: [name, ...scoped] } } : {})
  }
}

const componentsOf = (kind: ServedKind) => {
  const gvk = [{ group: kind.group, kind: kind.resource.kind, version: kind.version }]
  const apiVersion = kind.resource.apiVersion
  return {
    [schemaName(kind)]: { ...kind.openApiSchema, "x-kubernetes-group-version-kind": gvk },
    [schemaName(kind, listKind(kind))]: {
      description: `${kind.resource.kind}List is a list of ${kind.resource.kind}`,
      type: "object",
      required: ["items"],
      properties: {
        apiVersion: {
          type: "string",
          description: "APIVersion defines the versioned schema of this representation of an object.",
          default: apiVersion
        },
        kind: { type: "string", description: "Kind is a string value representing the REST resource this object represents." },
        metadata: { description: "Standard list metadata.", allOf: [ref(`${meta}.ListMeta`)], default: {} },
        items: { description: `List of ${kind.resource.plural}.`, type: "array", items: ref(schemaName(kind)) }
      },
      "x-kubernetes-group-version-kind": [{ group: kind.group, kind: listKind(kind), version: kind.version }]
    }
  }
}

interface Document {
  readonly path: string
  readonly hash: string
  readonly body: string
}

const documentOf = (group: string, version: string, kinds: ReadonlyArray<ServedKind>): Document => {
  const body = JSON.stringify({
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: kubernetesVersion.gitVersion },
    paths: Object.assign({}, ...kinds.map(pathsOf)),
    components: { schemas: Object.assign({}, sharedSchemas, ...kinds.map(componentsOf)) }
  })
  return {
    path: group === "" ? `api/${version}` : `apis/${group}/${version}`,
    hash: createHash("sha512").update(body).digest("hex").toUpperCase(),
    body
  }
}

/** One server's OpenAPI documents: the root listing them, and each by its path. */
export interface OpenApiDocuments {
  readonly root: () => { readonly paths: Readonly<Record<string, { readonly serverRelativeURL: string }>> }
  /** The document at /openapi/v3/<path>, or undefined. */
  readonly document: (path: string) => Document | undefined
}

/**
 * The documents, built when a client first asks (not every client does, and they never change
 * while the server runs), then kept by the server that owns them.
 */
export const makeOpenApiDocuments = (): OpenApiDocuments => {
  let built: ReadonlyArray<Document> | undefined
  const documents = (): ReadonlyArray<Document> =>
    (built ??= groupVersions().map(({ group, version, kinds }) => documentOf(group, version, kinds)))
  return {
    root: () => ({
      paths: Object.fromEntries(documents().map((d) => [d.path, { serverRelativeURL: `/openapi/v3/${d.path}?hash=${d.hash}` }]))
    }),
    document: (path) => documents().find((d) => d.path === path)
  }
}
