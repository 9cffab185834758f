// ControllerRevisions of StatefulSets and DaemonSets, as pkg/controller/history keeps them: one
// per distinct template, named <owner>-<hash>, labelled controller-revision-hash=<hash> (plus the
// template's labels), `data` the template as a strategic merge patch that replaces it, `revision`
// increasing; a template that comes back gets its old revision renumbered as the newest.
import { Effect } from "effect"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import type { WorkloadContext } from "./context.ts"
import { controllerRef, controllerRevisionHashLabel, field, isTerminating, numberAt, ownedBy, spec, type Json } from "./objects.ts"
import { createIn, deleteIn, patchIn } from "./writes.ts"

const revisionNumber = (revision: KubeObject): number => numberAt(revision, "revision")

/** The pod template a revision holds. */
export const revisionTemplate = (revision: KubeObject | undefined): Json | undefined => {
  if (revision === undefined) return undefined
  const { $patch: _replace, ...template } = field(field(revision["data"], "spec"), "template")
  return template
}

export interface Revisions {
  readonly update: KubeObject
  readonly all: ReadonlyArray<KubeObject>
}

/** The owner's revisions, with the one for `template` created or renumbered as the newest. */
export const ensureRevision = (ctx: WorkloadContext, owner: KubeObject, resource: Resource, template: Json, hash: string) =>
  Effect.gen(function* () {
    const store = ctx.stores.revisions
    const owned = ownedBy(owner, store.values()).filter((r) => !isTerminating(r))
    const name = `${owner.metadata.name}-${hash}`
    const newest = owned.reduce((n, r) => Math.max(n, revisionNumber(r)), 0)
    const existing = owned.find((r) => r.metadata.name === name)
    if (existing !== undefined) {
      const isNewest = revisionNumber(existing) === newest && owned.filter((r) => revisionNumber(r) === newest).length === 1
      const update = isNewest ? existing : yield* patchIn(store, existing, { revision: newest + 1 })
      return { update, all: owned.map((r) => (r === existing ? update : r)) } satisfies Revisions
    }
    const labels = field(template, "metadata")["labels"]
    const created = yield* createIn(store, {
      apiVersion: "apps/v1",
      kind: "ControllerRevision",
      metadata: {
        name,
        namespace: owner.metadata.namespace ?? "default",
        labels: { ...(isPlainObject(labels) ? (labels as Record<string, string>) : {}), [controllerRevisionHashLabel]: hash },
        ownerReferences: [controllerRef(owner, resource)]
      },
      data: { spec: { template: { ...template, $patch: "replace" } } },
      revision: newest + 1
    })
    return { update: created, all: [...owned, created] } satisfies Revisions
  })

/** Deletes the oldest revisions no pod and no status uses, beyond spec.revisionHistoryLimit (default 10). */
export const pruneRevisions = (ctx: WorkloadContext, owner: KubeObject, all: ReadonlyArray<KubeObject>, inUse: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const limit = numberAt(spec(owner), "revisionHistoryLimit", 10)
    const unused = all.filter((r) => !inUse.has(r.metadata.name ?? "")).sort((a, b) => revisionNumber(a) - revisionNumber(b))
    for (const revision of unused.slice(0, Math.max(0, unused.length - limit))) yield* deleteIn(ctx.stores.revisions, revision)
  })
