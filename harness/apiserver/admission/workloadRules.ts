// What kube-apiserver's apps/v1 strategies do to a workload's body: the defaults of
// k8s.io/kubernetes pkg/apis/apps/v1/defaults.go, and the validation a user meets first (a
// selector that selects the template's own pods), in kube-apiserver's words.
import { matchesLabelSelector } from "../../../src/api/labelSelector.ts"
import type { LabelSelector } from "../../../src/api/labelSelector.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Cause } from "../storage/storeErrors.ts"

type Body = Record<string, unknown>

const object = (value: unknown): Body => (isPlainObject(value) ? value : {})

const withSpec = (body: Body, defaults: (spec: Body) => Body): Body => ({ ...body, spec: defaults(object(body["spec"])) })

const rollingUpdate = (strategy: unknown, type: string, defaults: Body): Body => {
  const given = object(strategy)
  const kind = typeof given["type"] === "string" ? given["type"] : type
  return kind !== "RollingUpdate"
    ? { ...given, type: kind }
    : { ...given, type: kind, rollingUpdate: { ...defaults, ...object(given["rollingUpdate"]) } }
}

const defaultsByKind: Readonly<Record<string, (spec: Body) => Body>> = {
  Deployment: (spec) => ({
    replicas: 1,
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    ...spec,
    strategy: rollingUpdate(spec["strategy"], "RollingUpdate", { maxUnavailable: "25%", maxSurge: "25%" })
  }),
  StatefulSet: (spec) => ({
    replicas: 1,
    podManagementPolicy: "OrderedReady",
    revisionHistoryLimit: 10,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
    ...spec,
    updateStrategy: rollingUpdate(spec["updateStrategy"], "RollingUpdate", { partition: 0 })
  }),
  DaemonSet: (spec) => ({
    revisionHistoryLimit: 10,
    ...spec,
    updateStrategy: rollingUpdate(spec["updateStrategy"], "RollingUpdate", { maxUnavailable: 1, maxSurge: 0 })
  }),
  ReplicaSet: (spec) => ({ replicas: 1, ...spec })
}

const isWorkloadKind = (kind: string): boolean => kind in defaultsByKind

export const workloadDefaults = (kind: string, body: Body): Body => {
  const defaults = defaultsByKind[kind]
  return defaults === undefined ? body : withSpec(body, defaults)
}

// Go's %#v of a map[string]string, as field.Invalid prints the template's labels.
const goMap = (labels: Readonly<Record<string, string>>): string =>
  `map[string]string{${Object.entries(labels)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join(", ")}}`

/** The causes kube-apiserver refuses a workload's spec with (empty when it is valid). */
export const workloadCauses = (kind: string, body: Body): ReadonlyArray<Cause> => {
  if (!isWorkloadKind(kind)) return []
  const spec = object(body["spec"])
  const causes: Array<Cause> = []
  const selector = spec["selector"]
  const template = object(spec["template"])
  const labels = object(object(template["metadata"])["labels"]) as Record<string, string>
  if (!isPlainObject(selector)) causes.push({ field: "spec.selector", message: "Required value" })
  else if (
    Object.keys(object(selector["matchLabels"])).length === 0 &&
    !(Array.isArray(selector["matchExpressions"]) && selector["matchExpressions"].length > 0)
  ) {
    causes.push({ field: "spec.selector", message: `Invalid value: "{}": empty selector is invalid for ${kind.toLowerCase()}` })
  } else if (!matchesLabelSelector(selector as LabelSelector, labels)) {
    causes.push({
      field: "spec.template.metadata.labels",
      message: `Invalid value: ${goMap(labels)}: \`selector\` does not match template \`labels\``
    })
  }
  const containers = object(template["spec"])["containers"]
  if (!Array.isArray(containers) || containers.length === 0)
    causes.push({ field: "spec.template.spec.containers", message: "Required value" })
  return causes
}
