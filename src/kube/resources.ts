/** A kind the code reads or writes, with what the REST path and the watch need to know. */
export interface Resource {
  readonly apiVersion: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
}

const kruise = "apps.kruise.io/v1alpha1"

export const resources = {
  imagePullJob: { apiVersion: kruise, kind: "ImagePullJob", plural: "imagepulljobs", namespaced: true },
  imageListPullJob: { apiVersion: kruise, kind: "ImageListPullJob", plural: "imagelistpulljobs", namespaced: true },
  nodeImage: { apiVersion: kruise, kind: "NodeImage", plural: "nodeimages", namespaced: false },
  // Read and written in the version it is stored in; its two versions have the same schema.
  advancedCronJob: { apiVersion: "apps.kruise.io/v1beta1", kind: "AdvancedCronJob", plural: "advancedcronjobs", namespaced: true },
  node: { apiVersion: "v1", kind: "Node", plural: "nodes", namespaced: false },
  pod: { apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true },
  secret: { apiVersion: "v1", kind: "Secret", plural: "secrets", namespaced: true },
  configMap: { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  event: { apiVersion: "v1", kind: "Event", plural: "events", namespaced: true },
  lease: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", plural: "leases", namespaced: true },
  namespace: { apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false },
  deployment: { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true },
  statefulSet: { apiVersion: "apps/v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true },
  daemonSet: { apiVersion: "apps/v1", kind: "DaemonSet", plural: "daemonsets", namespaced: true },
  replicaSet: { apiVersion: "apps/v1", kind: "ReplicaSet", plural: "replicasets", namespaced: true },
  controllerRevision: { apiVersion: "apps/v1", kind: "ControllerRevision", plural: "controllerrevisions", namespaced: true }
} as const satisfies Record<string, Resource>
