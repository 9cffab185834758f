// --timeout (a Go duration, as kubectl's --timeout flags) and --parallelism (an ImagePullJob's).
import { Duration, Result } from "effect"
import { parseGoDuration } from "../api/goDuration.ts"
import type { Parallelism } from "../api/jobTemplate.ts"
import { isValidParallelism, resolveParallelism } from "../api/parallelism.ts"
import { RolloutFlagError } from "./errors.ts"

/**
 * Go's time.ParseDuration, non-negative: `90s`, `1.5m`, `1h30m`, `0`; a number needs a unit.
 * Undefined for 0, which means no limit (as `kubectl rollout status --timeout 0`).
 */
export const parseTimeout = (text: string): Result.Result<Duration.Duration | undefined, RolloutFlagError> => {
  const invalid = Result.fail(
    new RolloutFlagError({ message: `invalid argument "${text}" for "--timeout" flag: time: invalid duration "${text}"` })
  )
  const millis = parseGoDuration(text)
  if (millis === undefined || millis < 0) return invalid
  return Result.succeed(millis === 0 ? undefined : Duration.millis(millis))
}

/** An ImagePullJob's parallelism, except 0 or 0%: a paused job would never let the rollout go on. */
export const parseParallelism = (text: string): Result.Result<Parallelism, RolloutFlagError> => {
  const value: Parallelism = /^[0-9]+$/.test(text) ? Number(text) : text
  if (!isValidParallelism(value) || resolveParallelism(value, 1) === 0) {
    return Result.fail(
      new RolloutFlagError({ message: `--parallelism must be a positive integer or a percentage from 1% to 100%, got "${text}"` })
    )
  }
  return Result.succeed(value)
}
