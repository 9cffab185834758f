// apps/v1 workloads and the objects kube-controller-manager keeps for them, built as its
// controllers build them: a Deployment's ReplicaSets (controller reference, pod-template-hash on
// the ReplicaSet, its template and its pods), a StatefulSet's and a DaemonSet's
// ControllerRevisions (data `{"spec":{"template":{..., "$patch":"replace"}}}`, revision number,
// hash label) and pods labelled controller-revision-hash, placed on a node and Ready.
import type { KubeObject } from "../../src/kube/KubeApi.ts"

type Images = Readonly<Record<string, string>>

export const template = (app: string, images: Images, extra: { pullSecrets?: ReadonlyArray<string> } = {}) => ({
  metadata: { labels: { app } },
  spec: {
    containers: Object.entries(images).map(([name, image]) => ({ name, image })),
    ...(extra.pullSecrets === undefined ? {} : { imagePullSecrets: extra.pullSecrets.map((name) => ({ name })) })
  }
})

const owner = (kind: string, object: KubeObject) => ({
  apiVersion: "apps/v1",
  kind,
  name: object.metadata.name ?? "",
  uid: object.metadata.uid ?? "",
  controller: true,
  blockOwnerDeletion: true
})

export interface WorkloadOptions {
  readonly name: string
  readonly images: Images
  readonly annotations?: Record<string, string>
  readonly replicas?: number
  readonly uid?: string
  readonly pullSecrets?: ReadonlyArray<string>
  readonly spec?: Record<string, unknown>
  readonly status?: Record<string, unknown>
}

const workload = (kind: string, o: WorkloadOptions): KubeObject => ({
  apiVersion: "apps/v1",
  kind,
  metadata: {
    name: o.name,
    namespace: "default",
    ...(o.uid === undefined ? {} : { uid: o.uid }),
    ...(o.annotations === undefined ? {} : { annotations: o.annotations })
  },
  spec: {
    ...(kind === "DaemonSet" ? {} : { replicas: o.replicas ?? 4 }),
    selector: { matchLabels: { app: o.name } },
    template: template(o.name, o.images, o.pullSecrets === undefined ? {} : { pullSecrets: o.pullSecrets }),
    ...o.spec
  },
  ...(o.status === undefined ? {} : { status: o.status })
})

export const deployment = (o: WorkloadOptions) => workload("Deployment", o)
export const statefulSet = (o: WorkloadOptions) => workload("StatefulSet", o)
export const daemonSet = (o: WorkloadOptions) => workload("DaemonSet", o)

const templateOf = (object: KubeObject) => (object["spec"] as { template: ReturnType<typeof template> }).template

/** The ReplicaSet the deployment controller makes for a template: `NAME-HASH`, the hash on it and its template. */
export const replicaSet = (
  deploy: KubeObject,
  hash: string,
  o: { readonly replicas: number; readonly revision: number; readonly images?: Images; readonly uid?: string }
): KubeObject => {
  const app = deploy.metadata.name ?? ""
  const base = o.images === undefined ? templateOf(deploy) : template(app, o.images)
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${app}-${hash}`,
      namespace: "default",
      ...(o.uid === undefined ? {} : { uid: o.uid }),
      labels: { app, "pod-template-hash": hash },
      annotations: { "deployment.kubernetes.io/revision": String(o.revision) },
      ownerReferences: [owner("Deployment", deploy)]
    },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: { app, "pod-template-hash": hash } },
      template: { ...base, metadata: { labels: { ...base.metadata.labels, "pod-template-hash": hash } } }
    }
  }
}

/** A ControllerRevision as the StatefulSet (hashLabel controller.kubernetes.io/hash) or DaemonSet controller stores it. */
export const controllerRevision = (
  set: KubeObject,
  hash: string,
  o: { readonly revision: number; readonly images?: Images; readonly uid?: string }
): KubeObject => {
  const app = set.metadata.name ?? ""
  const base = o.images === undefined ? templateOf(set) : template(app, o.images)
  const hashLabel = set.kind === "StatefulSet" ? "controller.kubernetes.io/hash" : "controller-revision-hash"
  return {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      name: `${app}-${hash}`,
      namespace: "default",
      ...(o.uid === undefined ? {} : { uid: o.uid }),
      labels: { app, [hashLabel]: hash },
      ownerReferences: [owner(set.kind ?? "", set)]
    },
    data: { spec: { template: { ...base, $patch: "replace" } } },
    revision: o.revision
  }
}

/** A running pod of an owner, on a node; `revisionLabel` is pod-template-hash or controller-revision-hash. */
export const pod = (
  ownerObject: KubeObject,
  name: string,
  o: {
    readonly node: string
    readonly revisionLabel: string
    readonly revision: string
    readonly ready?: boolean
    readonly images?: Images
  }
): KubeObject => {
  const app = (ownerObject.metadata.labels?.["app"] ?? ownerObject.metadata.name) as string
  const images = o.images ?? { app: "unused:1" }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      labels: { app, [o.revisionLabel]: o.revision },
      ownerReferences: [owner(ownerObject.kind ?? "", ownerObject)]
    },
    spec: { nodeName: o.node, containers: Object.entries(images).map(([n, image]) => ({ name: n, image })) },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }]
    }
  }
}
