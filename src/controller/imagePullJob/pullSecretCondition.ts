import type { Condition } from "../../api/meta.ts"
import type { ObjectEvent } from "../../kube/events.ts"

const pullSecretInvalid = "PullSecretInvalid"

/** The problems named in one condition message; the rest are counted (a job may name many secrets). */
const namedAtMost = 3

/** A problem with one of the job's pull secrets, in words that name the secret and the key, never the content. */
export interface UnusablePullSecret {
  readonly message: string
}

export interface PullSecretVerdict {
  /** The condition to set, or none (the job never had an unusable pull secret). */
  readonly condition: Omit<Condition, "lastTransitionTime"> | undefined
  /** The Warning to emit: the problem is new or another one. */
  readonly event: ObjectEvent | undefined
}

const summary = (problems: ReadonlyArray<UnusablePullSecret>): string => {
  const named = problems.slice(0, namedAtMost).map((p) => p.message)
  const more = problems.length - named.length
  return more > 0 ? `${named.join("; ")}; and ${more} more unusable pull secrets` : named.join("; ")
}

/**
 * The job's PullSecretInvalid condition: True while a pull secret's data is no usable docker
 * config (the job goes on with its other secrets), with a Warning each time the problem first
 * shows or changes. Once fixed it stays, as False: API conventions change a condition's status
 * rather than drop it, so lastTransitionTime says when it was fixed and `kubectl wait
 * --for=condition=PullSecretInvalid=false` works. A job that never had one does not carry it.
 */
export const pullSecretVerdict = (
  previous: ReadonlyArray<Condition> | undefined,
  problems: ReadonlyArray<UnusablePullSecret>
): PullSecretVerdict => {
  const before = previous?.find((c) => c.type === pullSecretInvalid)
  if (problems.length === 0) {
    if (before === undefined) return { condition: undefined, event: undefined }
    return {
      condition: {
        type: pullSecretInvalid,
        status: "False",
        reason: "PullSecretsValid",
        message: "every pull secret is a usable docker config"
      },
      event: undefined
    }
  }
  const message = summary(problems)
  const news = before?.status !== "True" || before.message !== message
  return {
    condition: { type: pullSecretInvalid, status: "True", reason: "InvalidDockerConfig", message },
    event: news ? { type: "Warning", reason: pullSecretInvalid, message } : undefined
  }
}
