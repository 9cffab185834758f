/**
 * Every Kubernetes API call each role makes, with where it is allowed to happen. This is the
 * contract between the code and deploy/rbac.yaml: manifests.test.ts checks (1) that a scan of
 * the code finds exactly these (role, verb, resource) triples and (2) that the RBAC grants
 * exactly these, in exactly these scopes. A new KubeApi call fails the test until it is listed
 * here and granted in deploy/rbac.yaml.
 */

export type Role = "controller" | "daemon"

/**
 * Where a call may happen: any namespace / cluster-scoped objects, or only in the namespace a
 * flag of the role names (its value is read from the workload's args, else the flag's default).
 */
export type Scope = "cluster" | { readonly namespaceFlag: string }

export interface ApiUse {
  readonly role: Role
  readonly verb: "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"
  /** A key of `resources` in src/kube/resources.ts. */
  readonly kind: string
  readonly subresource?: "status" | "finalizers"
  readonly scope: Scope
  /** RBAC may narrow the grant to the object a flag names (the Lease). */
  readonly resourceNameFlag?: string
  /** Or to the one object of a fixed name the code uses (eraser's exclusion list). */
  readonly resourceName?: string
  /**
   * Granted by a kustomize component of deploy/components/ (the one its flag needs), not by
   * deploy/rbac.yaml: the code makes the call only with that flag.
   */
  readonly component?: "eraser"
  /**
   * Not a KubeApi call but required by the API server for one: the test checks that this text
   * still occurs in the role's code.
   */
  readonly implicitBecause?: string
}

const cluster = "cluster" as const
const secretNamespace = { namespaceFlag: "secret-namespace" }
const leaseNamespace = { namespaceFlag: "leader-election-namespace" }
const eraserNamespace = { namespaceFlag: "eraser-exclusion-namespace" }
const exclusionList = "preheat-excluded-images"

export const apiUsage: ReadonlyArray<ApiUse> = [
  // controller: informers (src/controller/controller.ts), all namespaces
  ...(
    [
      "imagePullJob",
      "imageListPullJob",
      "advancedCronJob",
      "nodeImage",
      "node",
      "pod",
      // workload-driven pre-pull (src/controller/workload/): the workloads and what tells their revisions
      "deployment",
      "statefulSet",
      "daemonSet",
      "replicaSet",
      "controllerRevision"
    ] as const
  ).flatMap((kind) => (["list", "watch"] as const).map((verb): ApiUse => ({ role: "controller", verb, kind, scope: cluster }))),
  // controller: the Secrets jobs name as pull secrets, read one by one (src/controller/pullSecrets/sourceSecrets.ts)
  { role: "controller", verb: "get", kind: "secret", scope: cluster },
  // controller: ImagePullJob (finalizer patch, status, TTL delete, ImageListPullJob children)
  { role: "controller", verb: "create", kind: "imagePullJob", scope: cluster },
  { role: "controller", verb: "patch", kind: "imagePullJob", scope: cluster },
  { role: "controller", verb: "delete", kind: "imagePullJob", scope: cluster },
  { role: "controller", verb: "patch", kind: "imagePullJob", subresource: "status", scope: cluster },
  // controller: ImageListPullJob (TTL delete; AdvancedCronJob runs: create, history and Replace delete)
  { role: "controller", verb: "create", kind: "imageListPullJob", scope: cluster },
  { role: "controller", verb: "delete", kind: "imageListPullJob", scope: cluster },
  { role: "controller", verb: "patch", kind: "imageListPullJob", subresource: "status", scope: cluster },
  {
    role: "controller",
    verb: "update",
    kind: "imageListPullJob",
    subresource: "finalizers",
    scope: cluster,
    // OwnerReferencesPermissionEnforcement: setting blockOwnerDeletion on a child needs update
    // on the owner's finalizers subresource.
    implicitBecause: "blockOwnerDeletion: true"
  },
  // controller: pre-download jobs are owned by their workload with blockOwnerDeletion, as upstream's
  ...(["deployment", "statefulSet", "daemonSet"] as const).map(
    (kind): ApiUse => ({
      role: "controller",
      verb: "update",
      kind,
      subresource: "finalizers",
      scope: cluster,
      implicitBecause: "blockOwnerDeletion: true"
    })
  ),
  // controller: AdvancedCronJob (src/controller/advancedCronJob/)
  { role: "controller", verb: "patch", kind: "advancedCronJob", subresource: "status", scope: cluster },
  {
    role: "controller",
    verb: "update",
    kind: "advancedCronJob",
    subresource: "finalizers",
    scope: cluster,
    // The scheduled ImageListPullJobs carry blockOwnerDeletion: true towards their cron job.
    implicitBecause: "blockOwnerDeletion: true"
  },
  // controller: NodeImage
  { role: "controller", verb: "get", kind: "nodeImage", scope: cluster },
  { role: "controller", verb: "create", kind: "nodeImage", scope: cluster },
  { role: "controller", verb: "patch", kind: "nodeImage", scope: cluster },
  { role: "controller", verb: "delete", kind: "nodeImage", scope: cluster },
  { role: "controller", verb: "patch", kind: "nodeImage", subresource: "status", scope: cluster },
  // controller: the startup taint of a warm node (src/controller/nodeWarming/)
  { role: "controller", verb: "patch", kind: "node", scope: cluster },
  // controller: pull-secret copies, only in the daemons' namespace (an informer there, and the writes)
  { role: "controller", verb: "list", kind: "secret", scope: secretNamespace },
  { role: "controller", verb: "watch", kind: "secret", scope: secretNamespace },
  { role: "controller", verb: "create", kind: "secret", scope: secretNamespace },
  { role: "controller", verb: "update", kind: "secret", scope: secretNamespace },
  { role: "controller", verb: "delete", kind: "secret", scope: secretNamespace },
  // controller: events (involved object's namespace; "default" for NodeImages)
  { role: "controller", verb: "create", kind: "event", scope: cluster },
  // controller and daemon: a repeated event's count, as client-go's recorder (src/kube/events.ts)
  { role: "controller", verb: "patch", kind: "event", scope: cluster },
  // controller: leader election
  { role: "controller", verb: "create", kind: "lease", scope: leaseNamespace },
  { role: "controller", verb: "get", kind: "lease", scope: leaseNamespace, resourceNameFlag: "leader-election-name" },
  { role: "controller", verb: "update", kind: "lease", scope: leaseNamespace, resourceNameFlag: "leader-election-name" },
  // controller: eraser's exclusion list, its one ConfigMap in eraser's namespace (src/controller/eraserExclusion/;
  // --eraser-exclusion-namespace, deploy/components/eraser). A list or watch by metadata.name is
  // authorized against resourceNames; a create cannot be.
  ...(["list", "watch", "update", "delete"] as const).map(
    (verb): ApiUse => ({
      role: "controller",
      verb,
      kind: "configMap",
      scope: eraserNamespace,
      resourceName: exclusionList,
      component: "eraser"
    })
  ),
  { role: "controller", verb: "create", kind: "configMap", scope: eraserNamespace, component: "eraser" },

  // daemon: its NodeImage (informer by field selector, status patches)
  { role: "daemon", verb: "list", kind: "nodeImage", scope: cluster },
  { role: "daemon", verb: "watch", kind: "nodeImage", scope: cluster },
  { role: "daemon", verb: "patch", kind: "nodeImage", subresource: "status", scope: cluster },
  // daemon: pull-secret copies, read only in its config namespace
  { role: "daemon", verb: "get", kind: "secret", scope: secretNamespace },
  // daemon: PullImageFailed and other Warning events
  { role: "daemon", verb: "create", kind: "event", scope: cluster },
  { role: "daemon", verb: "patch", kind: "event", scope: cluster },
  // daemon: --pin-images reads the completion policy of its tags' owner jobs, one by one (src/daemon/pins/ownerPolicies.ts)
  { role: "daemon", verb: "get", kind: "imagePullJob", scope: cluster },
  // daemon: its own Node, by field selector, for what status.images lists (src/daemon/unreportedImages.ts, unreportedTags.ts)
  { role: "daemon", verb: "list", kind: "node", scope: cluster },
  { role: "daemon", verb: "watch", kind: "node", scope: cluster }
]

/**
 * Where each role starts (its CLI command): the scan follows the (non-type) imports from here, so
 * every code path of the role (e.g. the real and the simulated runtime) is covered.
 */
export const roleEntries: Readonly<Record<Role, string>> = {
  controller: "src/cli/controllerCommand.ts",
  daemon: "src/cli/daemonCommand.ts"
}
