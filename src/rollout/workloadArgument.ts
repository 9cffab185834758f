// WORKLOAD as kubectl takes it: `deployment/web`, `deploy/web`, `deployments.apps/web`, or the
// type and the name as two arguments (`deployment web`).
import { Result } from "effect"
import { resources } from "../kube/resources.ts"
import type { Resource } from "../kube/resources.ts"
import { WorkloadArgumentError } from "./errors.ts"

export interface WorkloadKind {
  readonly resource: Resource
  /** kubectl's `resource.group` prefix of messages: `deployment.apps`. */
  readonly display: string
}

export interface WorkloadRef {
  readonly kind: WorkloadKind
  readonly name: string
}

const deployment: WorkloadKind = { resource: resources.deployment, display: "deployment.apps" }
const statefulSet: WorkloadKind = { resource: resources.statefulSet, display: "statefulset.apps" }
const daemonSet: WorkloadKind = { resource: resources.daemonSet, display: "daemonset.apps" }

// kubectl's names for them: singular, plural, short name, each also with the group (and version).
const kinds: ReadonlyMap<string, WorkloadKind> = new Map(
  (
    [
      [["deployment", "deployments", "deploy"], deployment],
      [["statefulset", "statefulsets", "sts"], statefulSet],
      [["daemonset", "daemonsets", "ds"], daemonSet]
    ] as const
  ).flatMap(([names, kind]) =>
    names.flatMap(
      (n) =>
        [
          [n, kind],
          [`${n}.apps`, kind],
          [`${n}.v1.apps`, kind]
        ] as const
    )
  )
)

const usage = "WORKLOAD is TYPE/NAME or TYPE NAME, with TYPE deployment (deploy), statefulset (sts) or daemonset (ds)"

const kindOf = (type: string): Result.Result<WorkloadKind, WorkloadArgumentError> => {
  const kind = kinds.get(type.toLowerCase())
  return kind === undefined
    ? Result.fail(new WorkloadArgumentError({ message: `preheat rollout cannot roll out "${type}": ${usage}` }))
    : Result.succeed(kind)
}

const named = (kind: WorkloadKind, name: string): Result.Result<WorkloadRef, WorkloadArgumentError> =>
  name === ""
    ? Result.fail(new WorkloadArgumentError({ message: `the workload's name is missing: ${usage}` }))
    : Result.succeed({ kind, name })

/** The workload of one (`TYPE/NAME`) or two (`TYPE NAME`) command-line arguments. */
export const parseWorkload = (args: ReadonlyArray<string>): Result.Result<WorkloadRef, WorkloadArgumentError> => {
  const [first = "", second] = args
  if (args.length > 2) {
    return Result.fail(new WorkloadArgumentError({ message: `one workload at a time, got ${args.length} arguments: ${usage}` }))
  }
  const slash = first.indexOf("/")
  if (slash >= 0) {
    if (second !== undefined) {
      // kubectl's words for `kubectl get deploy deploy/web`.
      return Result.fail(
        new WorkloadArgumentError({
          message: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form"
        })
      )
    }
    return Result.flatMap(kindOf(first.slice(0, slash)), (kind) => named(kind, first.slice(slash + 1)))
  }
  if (second === undefined) return Result.fail(new WorkloadArgumentError({ message: `the workload's name is missing: ${usage}` }))
  return Result.flatMap(kindOf(first), (kind) => named(kind, second))
}

/** `deployment.apps/web`, as kubectl names the object in its messages. */
export const displayName = (ref: WorkloadRef): string => `${ref.kind.display}/${ref.name}`
