// What comes back from the server is JSON; the KubeApi boundary promises objects with metadata and
// leaves deeper decoding to the callers (see KubeObject).
import { Predicate } from "effect"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import type { Resource } from "../../../src/kube/resources.ts"

/** `body` if it is shaped like a Kubernetes object (an object with a metadata object). */
export const asKubeObject = (body: unknown): KubeObject | undefined =>
  Predicate.isObject(body) && Predicate.isObject(body["metadata"]) ? (body as unknown as KubeObject) : undefined

/**
 * `object` with apiVersion and kind filled in where missing: kube-apiserver leaves them out of
 * built-in kinds' list items and wants them in request bodies; the in-memory server always has them.
 */
export const withTypeMeta = (resource: Resource, object: KubeObject): KubeObject =>
  object.apiVersion !== undefined && object.kind !== undefined
    ? object
    : { ...object, apiVersion: object.apiVersion ?? resource.apiVersion, kind: object.kind ?? resource.kind }
