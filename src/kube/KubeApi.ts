import { Context } from "effect"
import type { Effect, Stream } from "effect"
import type { ObjectMeta } from "../api/meta.ts"
import type { AlreadyExists, Conflict, Forbidden, Gone, Invalid, NotFound, Unauthorized, Unavailable } from "./errors.ts"
import type { Resource } from "./resources.ts"

/**
 * Objects cross this boundary as plain JSON: each caller decodes the kinds it acts on with the
 * project's Schemas, so a malformed object is reported where it is used, not dropped here.
 */
export interface KubeObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: ObjectMeta
  readonly [field: string]: unknown
}

export interface ObjectKey {
  readonly name: string
  readonly namespace?: string
}

export interface ListOptions {
  readonly namespace?: string
  readonly labelSelector?: string
  readonly fieldSelector?: string
  /**
   * What of each item the caller keeps, applied as each page of the list arrives (a store's
   * transform, client-go's SetTransform): a list of 100,000 kubelet-like Nodes is about 2 GiB
   * parsed and 100 MiB as the controller keeps them, so only one page is ever held whole.
   */
  readonly transform?: (object: KubeObject) => KubeObject
}

export interface ObjectList {
  readonly items: ReadonlyArray<KubeObject>
  readonly resourceVersion: string
}

export type WatchEvent =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: KubeObject }
  | { readonly type: "BOOKMARK"; readonly resourceVersion: string }

/** Where the object goes: the main resource or its status subresource. */
export type Subresource = "main" | "status"

/** DeleteOptions' preconditions: the object's uid and resourceVersion must still be these. */
export interface DeletePreconditions {
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

/** One operation of a JSON patch (RFC 6902). */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }

/**
 * A JSON merge patch (RFC 7386, an object: touches only the fields it names) or a JSON patch
 * (RFC 6902, an array of operations: its `test` operations are preconditions on single fields).
 */
export type Patch = Record<string, unknown> | ReadonlyArray<JsonPatchOperation>

/** Whether a patch is a JSON patch (`Array.isArray` does not narrow a readonly array out of a union). */
export const isJsonPatch = (patch: Patch): patch is ReadonlyArray<JsonPatchOperation> => Array.isArray(patch)

/** Any verb can be refused: Unauthorized (401, the credentials) or Forbidden (403, RBAC). */
export type Refused = Unauthorized | Forbidden
export type ReadError = NotFound | Refused | Unavailable
export type WriteError = NotFound | Conflict | Invalid | Refused | Unavailable

/**
 * The Kubernetes API as the controller and the daemon use it: the verbs, with errors as data so
 * that retries are decided by type. Live body: @kubernetes/client-node; test body: in memory.
 */
export class KubeApi extends Context.Service<
  KubeApi,
  {
    readonly get: (resource: Resource, key: ObjectKey) => Effect.Effect<KubeObject, ReadError>
    readonly list: (resource: Resource, options?: ListOptions) => Effect.Effect<ObjectList, Refused | Unavailable>
    /**
     * Changes after resourceVersion; fails with Gone when the server no longer has it. With
     * timeoutSeconds, a server that sends bookmarks sends one shortly before that deadline.
     */
    readonly watch: (
      resource: Resource,
      options: ListOptions & { readonly resourceVersion: string; readonly timeoutSeconds?: number }
    ) => Stream.Stream<WatchEvent, Gone | Refused | Unavailable>
    readonly create: (resource: Resource, object: KubeObject) => Effect.Effect<KubeObject, AlreadyExists | Invalid | Refused | Unavailable>
    /** A full replace, accepted only if metadata.resourceVersion is still current (else Conflict). */
    readonly update: (resource: Resource, object: KubeObject, subresource?: Subresource) => Effect.Effect<KubeObject, WriteError>
    /**
     * A merge patch or a JSON patch. A JSON patch whose `test` fails is a Conflict: kube-apiserver
     * answers 422 with the json-patch library's words (`failedTestPath`), but it is a precondition
     * that no longer held, as a stale resourceVersion is.
     */
    readonly patch: (resource: Resource, key: ObjectKey, patch: Patch, subresource?: Subresource) => Effect.Effect<KubeObject, WriteError>
    /**
     * Deletes (or marks for deletion while finalizers remain) and answers the object the request
     * acted on, as deleted or marked: never whatever holds the name afterwards (a controller may
     * re-create it at once). Undefined where the server answered a Status instead. Preconditions
     * (a Conflict when they do not hold) protect a re-created or changed object.
     */
    readonly delete: (
      resource: Resource,
      key: ObjectKey,
      preconditions?: DeletePreconditions
    ) => Effect.Effect<KubeObject | undefined, NotFound | Conflict | Refused | Unavailable>
  }
>()("preheat/kube/KubeApi") {}
