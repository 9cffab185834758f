import { Effect } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { deleteExact } from "../../kube/deleteExact.ts"
import { recordEvent } from "../../kube/events.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject, ListOptions } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import { makeStore } from "../../kube/store.ts"
import type { StoreWriter } from "../../kube/store.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { JobStore } from "../stores.ts"
import { decideExclusion, excludedImages, exclusionListName, keepsWarm } from "./decide.ts"
import { exclusionListKey } from "./watches.ts"

/** The list's ConfigMap as the controller sees it: a store of that one object, and how it is watched. */
export interface ExclusionList {
  readonly namespace: string
  readonly store: StoreWriter<KubeObject>
  /** Its namespace and its name only: RBAC grants the list and watch of that one name (deploy/components/eraser). */
  readonly watch: ListOptions
}

export const makeExclusionList = (namespace: string): ExclusionList => ({
  namespace,
  store: makeStore(resources.configMap),
  watch: { namespace, fieldSelector: `metadata.name=${exclusionListName}` }
})

const record = recordEvent("preheat-controller")

const asConfigMap = (object: KubeObject): KubeObject => ({ ...object, apiVersion: "v1", kind: "ConfigMap" })

const jobsKeptWarm = function* (jobs: JobStore): Generator<ImagePullJob> {
  for (const stored of jobs.entries()) {
    const job = keepsWarm(stored)
    if (job !== undefined) yield job
  }
}

/**
 * The one ConfigMap eraser reads preheat's exclusions from (issue 39): created once a Never job
 * keeps an image warm, rewritten when the list's text changes (never when it does not), deleted
 * when no such job remains. A ConfigMap of that name that preheat does not manage is left alone.
 */
export const reconcileExclusionList = (jobs: JobStore, list: ExclusionList): Reconcile<KubeApi> => {
  const key = exclusionListKey(list.namespace)
  // The version of a ConfigMap not ours that was last warned about: one warning per version, not per job change.
  let warnedAbout: string | undefined
  return Effect.fn("reconcile eraser exclusion list")(function* (_key: string) {
    const decision = decideExclusion(list.namespace, excludedImages(jobsKeptWarm(jobs)), list.store.get(key))
    switch (decision.action) {
      case "none":
        return {}
      case "notOurs": {
        const version = decision.object.metadata.resourceVersion
        if (warnedAbout === version) return {}
        warnedAbout = version
        const message = `ConfigMap ${key} exists and is not managed by preheat (label app.kubernetes.io/managed-by=preheat): the images Never jobs keep warm are not written to eraser's exclusion list; delete it or let preheat manage it`
        yield* Effect.logWarning("eraser exclusion list: name taken").pipe(Effect.annotateLogs({ configMap: key }))
        yield* record(asConfigMap(decision.object), { type: "Warning", reason: "ExclusionListNotOwned", message })
        return {}
      }
      case "delete": {
        yield* deleteExact(resources.configMap, decision.object)
        yield* list.store.removed(key, decision.object.metadata.uid)
        yield* Effect.logInfo("eraser exclusion list: deleted, no Never job remains").pipe(Effect.annotateLogs({ configMap: key }))
        return {}
      }
      case "create":
      case "update": {
        const api = yield* KubeApi
        const written =
          decision.action === "create"
            ? // Created meanwhile (by a previous leader): its watch event wakes this key again.
              yield* api
                .create(resources.configMap, decision.object)
                .pipe(Effect.catchTag("AlreadyExists", () => Effect.succeed(undefined)))
            : yield* api.update(resources.configMap, decision.object)
        if (written === undefined) return {}
        yield* list.store.written(written)
        if (decision.left.length > 0) {
          const message = `the images Never jobs keep warm do not fit in one ConfigMap (1 MiB): ${decision.left.length} left out of eraser's exclusion list, from ${decision.left[0]}`
          yield* Effect.logError("eraser exclusion list: truncated").pipe(
            Effect.annotateLogs({ configMap: key, left: decision.left.length })
          )
          yield* record(asConfigMap(written), { type: "Warning", reason: "ExclusionListTruncated", message })
        }
        return {}
      }
    }
  }, Effect.mapError(retryable))
}
