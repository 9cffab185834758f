import { Data } from "effect"

/** The WORKLOAD argument names no workload kind preheat can roll out, or no name. */
export class WorkloadArgumentError extends Data.TaggedError("WorkloadArgumentError")<{ readonly message: string }> {}

/** A flag's value is malformed: --image, --timeout or --parallelism. */
export class RolloutFlagError extends Data.TaggedError("RolloutFlagError")<{ readonly message: string }> {}

/** The workload's pod template cannot be read (not an object, no containers). */
export class WorkloadShapeError extends Data.TaggedError("WorkloadShapeError")<{ readonly message: string }> {}

/** An --image names a container the pod template does not have; in kubectl's words. */
export class ContainerNotFound extends Data.TaggedError("ContainerNotFound")<{ readonly container: string }> {
  override get message(): string {
    return `unable to find container named "${this.container}"`
  }
}

/** The pre-pull did not succeed everywhere in time: the workload was left as it was. */
export class PrePullFailed extends Data.TaggedError("PrePullFailed")<{ readonly message: string }> {}

/** No such workload in the namespace; kubectl's words plus the namespace looked in. */
export class WorkloadNotFound extends Data.TaggedError("WorkloadNotFound")<{
  readonly plural: string
  readonly name: string
  readonly namespace: string
}> {
  override get message(): string {
    return `${this.plural}.apps "${this.name}" not found in namespace ${this.namespace}`
  }
}
