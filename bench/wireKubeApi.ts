// A KubeApi whose objects cross as JSON text, as over HTTP: what the caller sends is copied before
// the server holds it, and what the server answers (objects, list items, watch events) is parsed
// afresh for the caller. The in-memory server hands out its stored objects (frozen, shared between
// versions and with every other reader), so a controller on it would hold nothing of its own; on
// the wire each version is the caller's, as a live client's are. The copying's CPU is counted apart.
import { Effect, Stream } from "effect"
import type { KubeObject, Patch, WatchEvent } from "../src/kube/KubeApi.ts"
import { KubeApi } from "../src/kube/KubeApi.ts"

export interface Wire {
  readonly api: KubeApi["Service"]
  /** Time spent copying so far, in ms (wall clock, performance.now: under load it counts the waits too). */
  readonly copyMs: () => number
}

export const wireKubeApi = (inner: KubeApi["Service"]): Wire => {
  let copyMs = 0
  const copy = <A>(value: A): A => {
    if (value === undefined) return value
    const started = performance.now()
    const copied = JSON.parse(JSON.stringify(value)) as A
    copyMs += performance.now() - started
    return copied
  }
  const answer = <A, E, R>(call: Effect.Effect<A, E, R>) => Effect.map(call, copy)
  return {
    copyMs: () => copyMs,
    api: KubeApi.of({
      get: (resource, key) => answer(inner.get(resource, key)),
      list: (resource, options) => answer(inner.list(resource, options)),
      watch: (resource, options) =>
        inner.watch(resource, options).pipe(Stream.map((event): WatchEvent => (event.type === "BOOKMARK" ? event : copy(event)))),
      create: (resource, object) => Effect.suspend(() => answer(inner.create(resource, copy<KubeObject>(object)))),
      update: (resource, object, subresource) =>
        Effect.suspend(() => answer(inner.update(resource, copy<KubeObject>(object), subresource))),
      patch: (resource, key, patch, subresource) =>
        Effect.suspend(() => answer(inner.patch(resource, key, copy<Patch>(patch), subresource))),
      delete: (resource, key, preconditions) => answer(inner.delete(resource, key, preconditions))
    })
  }
}
