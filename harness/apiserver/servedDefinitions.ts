// The CustomResourceDefinitions this server serves: the four of `preheat crds` (deploy/crds/), the
// very definitions its custom kinds run on (catalog.ts builds them from the same source). They are
// stored as a cluster that installed them holds them, established, so `kubectl get crd` and the
// install steps of the README and the migration guide work; admission keeps them as they are
// (admission/fixedDefinitions.ts), since the schemas cannot change while the server runs.
import { crds } from "../../src/api/crd/manifests.ts"
import { storageVersion } from "../../src/api/references.ts"
import { rfc3339 } from "../../src/api/time.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

/** Each served definition's spec, by the definition's name (`imagepulljobs.apps.kruise.io`). */
export const servedSpecs: ReadonlyMap<string, unknown> = new Map(crds().map((crd) => [crd.metadata.name, crd.spec]))

/**
 * The definitions as stored at `now`: with the status kube-apiserver's controllers give an
 * accepted definition (names accepted, established, the storage version recorded).
 */
export const servedDefinitions = (now: number): ReadonlyArray<KubeObject> => {
  const since = rfc3339(now)
  return crds().map((crd) => ({
    ...crd,
    status: {
      acceptedNames: crd.spec.names,
      conditions: [
        { type: "NamesAccepted", status: "True", lastTransitionTime: since, reason: "NoConflicts", message: "no conflicts found" },
        {
          type: "Established",
          status: "True",
          lastTransitionTime: since,
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted"
        }
      ],
      storedVersions: [storageVersion]
    }
  }))
}
